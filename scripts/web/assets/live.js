// Follows the session's event stream and appends each line as text (an
// answer's HTML is goldmark's, with raw HTML left out); the page works
// without it, read as it was served.
(function () {
  var list = document.getElementById("events");
  if (!list || !window.EventSource) return;
  var src = new EventSource(list.dataset.stream + "?last=" + encodeURIComponent(list.dataset.last));
  src.addEventListener("line", function (e) {
    var row = JSON.parse(e.data);
    var li = document.createElement("li");
    li.className = row["class"];
    if (row.html) li.innerHTML = row.html; else li.textContent = row.text;
    li.dataset.id = row.id;
    list.appendChild(li);
    // steer.js and panels.js follow the same lines.
    document.dispatchEvent(new CustomEvent("ralph-line", { detail: row }));
  });
  // A finished stream is closed, not reconnected to.
  src.addEventListener("end", function () { src.close(); });
})();
