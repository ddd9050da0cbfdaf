// Steering from a live session page (steer.html): it listens for the
// "ralph-line" events live.js dispatches for each line that arrives.
(function () {})();
