// Keeps the index up to date without a reload: the server sends a
// "session" event with each row that is new or changed (its status,
// turns, tokens, cost, live flag) and a "gone" event for a row no longer
// listed; the ages count on from each row's last work. Every value is set
// as text. Without this script the index reads as it was served.
(function () {
  var table = document.querySelector("table.sessions");
  if (!table || !window.EventSource) return;
  var body = table.tBodies[0];
  var cols = ["project", "id", "status", "mode", "model", "turns", "tokens", "cost", "age", "live", "first"];

  // age is Go's age() in server.go: seconds, minutes, hours, then days.
  function age(updated) {
    if (!updated) return "";
    var s = Math.max(0, Math.round((Date.now() - updated) / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 48 * 3600) return Math.floor(s / 3600) + "h";
    return Math.floor(s / 86400) + "d";
  }

  function find(key) {
    for (var i = 0; i < body.rows.length; i++) {
      if (body.rows[i].dataset.key === key) return body.rows[i];
    }
    return null;
  }

  function make(s) {
    var tr = document.createElement("tr");
    tr.dataset.key = s.key;
    cols.forEach(function (c) {
      var td = document.createElement("td");
      td.dataset.col = c;
      tr.appendChild(td);
    });
    var a = document.createElement("a");
    a.href = s.href;
    tr.querySelector('[data-col="id"]').appendChild(a);
    return tr;
  }

  function fill(tr, s) {
    var cell = function (c) { return tr.querySelector('[data-col="' + c + '"]'); };
    ["project", "status", "mode", "model", "cost"].forEach(function (c) {
      var v = String(s[c] === undefined ? "" : s[c]);
      if (cell(c).textContent !== v) cell(c).textContent = v;
    });
    // The status comes in words; the enum stays for the styles.
    cell("status").dataset.status = s.state || "";
    // A figure and its noun, which a phone's card shows after it ("1
    // turn"); the server chose the noun for the number.
    ["turns", "tokens"].forEach(function (c) {
      var td = cell(c), n = String(s[c] === undefined ? "" : s[c]);
      var unit = td.querySelector(".unit");
      if (!unit) {
        unit = document.createElement("span");
        unit.className = "unit";
      }
      unit.textContent = " " + (s[c + "_noun"] || "");
      if (td.firstChild && td.firstChild.nodeType === 3 && td.firstChild.nodeValue === n && td.lastChild === unit) return;
      td.textContent = n;
      td.appendChild(unit);
    });
    cell("first").textContent = s.first || "";
    // The cells are cut to the screen (style.css); the title has them whole.
    cell("first").title = s.first || "";
    cell("project").title = s.project || "";
    cell("id").firstChild.textContent = s.id;
    tr.dataset.updated = s.updated;
    cell("age").textContent = age(s.updated);
    var live = cell("live");
    live.textContent = "";
    if (s.live) {
      var span = document.createElement("span");
      span.className = "live";
      span.textContent = "live";
      live.appendChild(span);
    }
  }

  // place keeps the rows newest first, as the server lists them.
  function place(tr, updated) {
    var none = body.querySelector("tr.none");
    if (none) none.remove();
    for (var i = 0; i < body.rows.length; i++) {
      var r = body.rows[i];
      if (r !== tr && Number(r.dataset.updated || 0) < updated) {
        if (r.previousElementSibling !== tr) body.insertBefore(tr, r);
        return;
      }
    }
    if (tr.parentNode !== body || tr.nextElementSibling) body.appendChild(tr);
  }

  var src = new EventSource(table.dataset.stream);
  src.addEventListener("session", function (e) {
    var s = JSON.parse(e.data);
    var tr = find(s.key);
    if (!tr) tr = make(s);
    fill(tr, s);
    place(tr, s.updated);
  });
  src.addEventListener("gone", function (e) {
    var tr = find(JSON.parse(e.data).key);
    if (tr) tr.remove();
  });
  setInterval(function () {
    for (var i = 0; i < body.rows.length; i++) {
      var r = body.rows[i], c = r.querySelector('[data-col="age"]');
      if (c && r.dataset.updated) c.textContent = age(Number(r.dataset.updated));
    }
  }, 1000);
})();
