// Follows the session's event stream and appends each line as text (an
// answer's HTML is goldmark's, with raw HTML left out); the page works
// without it, read as it was served. The log is a box of its own beside
// the panels (style.css): it opens at its newest line and stays there
// as lines come, unless the person scrolled up to read.
(function () {
  var list = document.getElementById("events");
  if (!list) return;
  var atEnd = function () { return list.scrollHeight - list.scrollTop - list.clientHeight < 40; };
  // stick: the log shows its end, and keeps showing it when lines come or
  // the page is laid out again (a wider or narrower window, fonts).
  var stick = true;
  var toEnd = function () { if (stick) list.scrollTop = list.scrollHeight; };
  list.addEventListener("scroll", function () { stick = atEnd(); });
  window.addEventListener("resize", toEnd);
  // A new width wraps the lines anew once laid out, after resize fired.
  if (window.ResizeObserver) new ResizeObserver(toEnd).observe(list);
  window.addEventListener("load", toEnd);
  if (document.fonts) document.fonts.ready.then(toEnd);
  toEnd();
  if (!window.EventSource) return;
  var src = new EventSource(list.dataset.stream + "?last=" + encodeURIComponent(list.dataset.last));
  src.addEventListener("line", function (e) {
    var row = JSON.parse(e.data);
    var li = document.createElement("li");
    li.className = row["class"];
    if (row.html) li.innerHTML = row.html; else li.textContent = row.text;
    li.dataset.id = row.id;
    list.appendChild(li);
    toEnd();
    // steer.js and panels.js follow the same lines.
    document.dispatchEvent(new CustomEvent("ralph-line", { detail: row }));
  });
  // A finished stream is closed, not reconnected to, and the list says
  // it holds the session's last line (data-ended), which the tests wait
  // for rather than for a time.
  src.addEventListener("end", function () { src.close(); list.dataset.ended = "true"; });
})();
