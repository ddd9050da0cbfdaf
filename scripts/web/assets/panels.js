// The panels beside the events (panels.html): when a line arrives whose
// type changes them (the section's data-types), the panels are fetched
// again from the server, rendered as the page was, and put in place. No
// timer: the event stream says when. Without JavaScript the page shows
// them as served.
(function () {
  var busy = false, again = false;
  function refresh() {
    var panels = document.getElementById("panels");
    if (!panels) return;
    if (busy) { again = true; return; }
    busy = true;
    // Which checkpoints a person opened or closed stays so.
    var open = {};
    panels.querySelectorAll("details.checkpoint").forEach(function (d) {
      var c = d.querySelector(".cmd");
      if (c) open[c.textContent] = d.open;
    });
    fetch(panels.dataset.fragment, { credentials: "same-origin", headers: { Accept: "text/html" } })
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
          if (c && c.textContent in open) d.open = open[c.textContent];
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
  document.addEventListener("ralph-line", function (e) {
    var panels = document.getElementById("panels");
    if (!panels || !e.detail) return;
    var types = (panels.dataset.types || "").split(" ");
    if (types.indexOf(e.detail.type) >= 0) refresh();
  });
})();
