// Steering from a live session page (steer.html). The question that
// waits comes and goes live: on a "question" or "answered" line (the
// "ralph-line" events live.js dispatches) the steering part is fetched
// again from the server, with no timer. The forms are posted with fetch,
// asking for the reply object, which is shown beside them; the page
// itself is not reloaded. Every string shown is set as text.
(function () {
  var section = document.getElementById("steer");
  if (!section || !window.fetch) return;

  var reply = document.createElement("p");
  reply.className = "steer-reply";
  reply.setAttribute("aria-live", "polite");
  section.parentNode.insertBefore(reply, section.nextSibling);

  function say(text, bad) {
    reply.textContent = text;
    reply.classList.toggle("bad", !!bad);
  }

  // refresh puts the question the server has now where the page showed
  // the last one; the say field and what is typed in it stay. Refreshes
  // run one after the other, so lines close together land in order.
  var chain = Promise.resolve();
  function refresh(note) {
    chain = chain.then(function () {
      return fetch(section.dataset.part, { headers: { Accept: "text/html" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : ""; })
        .then(function (html) { show(html, note); })
        // A refresh that fails (the run ended and its server with it)
        // does not take the place of a reply the page shows already:
        // the answer just sent was taken, whatever came after it.
        .catch(function (e) { if (!reply.textContent) say("could not fetch the question: " + e, true); });
    });
  }

  function show(html, note) {
    var t = document.createElement("template");
    t.innerHTML = html; // the server's own template, every string escaped
    var fresh = t.content.querySelector(".waiting");
    var old = section.querySelector(".waiting");
    var same = old && fresh && old.dataset.id === fresh.dataset.id;
    if (old && !same) old.remove();
    if (fresh && !same) section.insertBefore(fresh, section.firstChild);
    var was = section.querySelector(".answered");
    // The note says how the last question was answered; once the next
    // one waits (its line may come while this fetch runs), a note under
    // it would read as that question's answer, and the page's log keeps
    // the line anyway.
    if (note && !fresh) {
      if (!was) {
        was = document.createElement("p");
        was.className = "answered";
        section.insertBefore(was, section.firstChild);
      }
      was.textContent = note;
    } else if (fresh && was) {
      was.remove();
    }
  }

  document.addEventListener("ralph-line", function (e) {
    var row = e.detail || {};
    if (row.type === "question") refresh(null);
    // The answered line says which answer won and where it came from:
    // the terminal, ralph answer, or a page like this one.
    if (row.type === "answered") refresh(row.text || "answered");
  });

  section.addEventListener("submit", function (e) {
    var form = e.target;
    e.preventDefault();
    var body = new URLSearchParams(new FormData(form));
    var b = e.submitter;
    if (b && b.name) body.set(b.name, b.value);
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (x) { x.disabled = true; });
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { Accept: "application/json" }
    })
      .then(function (r) {
        if (r.headers.get("Content-Type") !== "application/json") {
          return r.text().then(function (t) { return { ok: false, reply: r.status + " " + t.trim() }; });
        }
        return r.json();
      })
      .then(function (o) {
        say(o.reply, !o.ok);
        if (o.ok && form.elements.text) form.elements.text.value = "";
      })
      .catch(function (err) { say("not sent: " + err, true); })
      .then(function () { buttons.forEach(function (x) { x.disabled = false; }); });
  });
})();
