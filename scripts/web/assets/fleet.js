// The fleet of a run on Temporal (fleet.html): when a line says a task
// or an agent changed (live.js's "ralph-line" events), the section is
// fetched again and put in its place. No timer: the page follows the
// run's own events. A worker taking a task comes with no event, so while
// a task in flight has no worker the section is asked for again at once;
// the server holds each answer until every such task has one, or a few
// seconds have passed.
(function () {
  var kinds = /^(task_changed|agent_)/;
  var busy = false, again = false;
  function refresh() {
    var el = document.getElementById("fleet");
    if (!el) return;
    if (busy) { again = true; return; }
    busy = true;
    fetch(el.dataset.src, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        // The fragment is the server's html/template output, escaped as
        // the page itself is.
        var t = document.createElement("template");
        t.innerHTML = html.trim();
        var next = t.content.firstElementChild;
        // An empty answer (the run on Temporal is over) keeps the last
        // fleet shown.
        if (next && next.id === "fleet") {
          el.replaceWith(next);
          if (unsettled(next)) again = true;
        }
      })
      .catch(function () {})
      .finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  function unsettled(el) {
    return el && el.querySelector('tr[data-state="in_progress"][data-worker=""]');
  }
  document.addEventListener("ralph-line", function (e) {
    if (e.detail && kinds.test(e.detail.type || "")) refresh();
  });
  // The page may have been served after the events of the tasks in
  // flight, before a worker took them: no line will come for that.
  if (unsettled(document.getElementById("fleet"))) refresh();
})();
