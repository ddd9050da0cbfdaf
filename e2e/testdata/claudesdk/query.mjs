// query.mjs is a program written against Claude Code's Agent SDK
// (@anthropic-ai/claude-agent-sdk from npm, installed by e2e/setup.sh),
// as a script or a CI action is: it calls the SDK's query() with ralph
// as the Claude Code executable (pathToClaudeCodeExecutable), so the
// SDK starts ralph with the flags it gives claude, writes the prompt as
// stream-json on ralph's standard input and parses what ralph prints
// with its own reader. Everything query() yields is logged, with what
// ralph said on stderr and the error query() threw, if any, for the Go
// test (e2e/claude_sdk_test.go) to check.
//
//   node query.mjs PLAN.json LOG.json
//
// The plan: executable, cwd, env (ralph's whole environment); prompt, a
// string (the SDK's one-shot use), or prompts, a list of strings sent
// as a stream of user messages, each once the result of the one before
// came; options, merged into query()'s options (extraArgs, maxTurns, …).
import { readFileSync, writeFileSync } from "node:fs";
import { query } from "@anthropic-ai/claude-agent-sdk";

const [planPath, logPath] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, "utf8"));
const log = { messages: [], stderr: "", error: null };

// results counts the result messages seen, so each streamed prompt waits
// for the answer to the one before, as a person at a chat would.
let results = 0;
let wake = () => {};
const resultCame = (n) => new Promise((resolve) => {
  const check = () => (results >= n ? resolve() : (wake = check));
  check();
});
async function* messages() {
  for (let i = 0; i < plan.prompts.length; i++) {
    if (i > 0) await resultCame(i);
    yield {
      type: "user",
      message: { role: "user", content: [{ type: "text", text: plan.prompts[i] }] },
      parent_tool_use_id: null,
      session_id: "",
    };
  }
}

const q = query({
  prompt: plan.prompts ? messages() : plan.prompt,
  options: {
    pathToClaudeCodeExecutable: plan.executable,
    cwd: plan.cwd,
    env: plan.env,
    stderr: (s) => { log.stderr += s; },
    ...plan.options,
  },
});
try {
  for await (const m of q) {
    log.messages.push(m);
    if (m.type === "result") {
      results++;
      wake();
    }
  }
} catch (e) {
  log.error = String(e?.message ?? e);
}
writeFileSync(logPath, JSON.stringify(log));
