// The panels beside the events (panels.html): it listens for the
// "ralph-line" events live.js dispatches for each line that arrives.
(function () {})();
