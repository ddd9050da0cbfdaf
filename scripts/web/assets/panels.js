// The panels beside the events (panels.html): when a line arrives whose
// type changes them (the section's data-types), the panels are fetched
// again from the server, rendered as the page was, and put in place. No
// timer: the event stream says when. Without JavaScript the page shows
// them as served.
(function () {
  var busy = false, again = false, upto = 0;
  function refresh() {
    var panels = document.getElementById("panels");
    if (!panels) return;
    if (busy) { again = true; return; }
    busy = true;
    // A checkpoint a person opened or closed stays so; the others are
    // as the server serves them (the newest open).
    var open = {};
    panels.querySelectorAll("details.checkpoint[data-touched]").forEach(function (d) {
      var c = d.querySelector(".cmd");
      if (c) open[c.textContent] = d.open;
    });
    // upto: the server waits, a moment at most, for its records to hold
    // the line that asked, which the stream may bring first.
    fetch(panels.dataset.fragment + "?upto=" + upto, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(new Error("panels: " + r.status)); })
      .then(function (html) {
        // The fragment is the server's own template, every string in it
        // escaped; it replaces the section whole.
        var t = document.createElement("template");
        t.innerHTML = html;
        var fresh = t.content.getElementById("panels");
        var now = document.getElementById("panels");
        if (!fresh || !now) return;
        fresh.querySelectorAll("details.checkpoint").forEach(function (d) {
          var c = d.querySelector(".cmd");
          if (c && c.textContent in open) {
            d.open = open[c.textContent];
            d.dataset.touched = "";
          }
        });
        now.replaceWith(fresh);
        document.dispatchEvent(new CustomEvent("ralph-panels"));
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  document.addEventListener("click", function (e) {
    var s = e.target.closest && e.target.closest("#panels details.checkpoint > summary");
    if (s) s.parentNode.dataset.touched = "";
  });
  document.addEventListener("ralph-line", function (e) {
    var panels = document.getElementById("panels");
    if (!panels || !e.detail) return;
    var types = (panels.dataset.types || "").split(" ");
    if (e.detail.id > upto) upto = e.detail.id;
    if (types.indexOf(e.detail.type) >= 0) refresh();
  });
})();
