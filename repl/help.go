package repl

// Help is `ralph chat --help`'s text.
const Help = `Talk to ralph in an interactive shell. Answers stream as they arrive; while
ralph works you can keep typing:

  Ctrl-C, Esc, /stop   hard stop: cancel everything in flight, save, back to the prompt
  !message             urgent: cut the current model step, ralph reads it at once
  message              normal: delivered at the next step boundary, in order

At an idle prompt Ctrl-C clears the line; Ctrl-C twice or Ctrl-D leaves;
!command runs the command in the sandbox and gives its output to ralph, and
@file in a message attaches the file.
/help lists the slash commands (/status, /tasks, /agents, /model, /clear, ...).
run_command asks y/n/always, showing the command exactly as it will run;
"always" remembers each part's first word (two for go test, npm run, ...) in
.ralph/config.toml, and covers a later command only while all of it stays in
the project (no redirection out, no $(...), no sh -c, eval, xargs, find -exec).

With standard input not a terminal (ralph chat < FILE) each line is run as if
typed: no prompt, no colour, # comments and blank lines skipped, slash commands
allowed, a trailing backslash continues a line; every line runs, and the exit
code is that of the first failed step (0 when all succeeded).`
