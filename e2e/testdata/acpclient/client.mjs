// client.mjs is an editor for the end-to-end tests of `ralph acp`
// (e2e/acp_*_test.go): it starts the agent as an editor does, speaks the
// Agent Client Protocol with it through the protocol's own npm library
// (@agentclientprotocol/sdk, the client app over ndJsonStream on the
// child's standard input and output), follows a plan the Go test wrote,
// and leaves behind a JSON log of everything that passed: each
// session/update, each request the agent made and how it was answered,
// each call the client made and its result. Every byte the agent wrote
// on standard output is kept as it came, for the test to check that it
// is all JSON-RPC.
//
//   node client.mjs PLAN.json LOG.json
//
// The plan: agent {command, args, env, cwd}; stdout and stderr (files
// for the agent's raw output); fs {read, write} (the capabilities
// offered); buffers {abs path: text} (the editor's unsaved buffers,
// served instead of the disk); writeDisk (whether fs/write_text_file
// writes the disk, as an editor saving would); fsDelayMs (how long the
// editor takes over each fs/* request before it opens the path, as a
// busy editor does); answers (one per
// permission request, in order: yes, always, no, cancel, disconnect;
// yes once they run out); steps, each {op: new|load|prompt|setMode, …}.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync, createWriteStream, existsSync, readdirSync } from "node:fs";
import { Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [planPath, logPath] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, "utf8"));
const began = Date.now();
const log = [];
const note = (e) => log.push({ ms: Date.now() - began, ...e });
const pause = () => new Promise((resolve) => setTimeout(resolve, plan.fsDelayMs || 0));

const child = spawn(plan.agent.command, plan.agent.args ?? [], {
  cwd: plan.agent.cwd,
  env: plan.agent.env,
  stdio: ["pipe", "pipe", "pipe"],
});
const rawOut = createWriteStream(plan.stdout);
const rawErr = createWriteStream(plan.stderr);
child.stderr.pipe(rawErr);
const exited = new Promise((resolve) =>
  child.on("exit", (code, signal) => {
    note({ event: "exit", code, signal });
    resolve();
  }),
);

// The agent's standard output, kept byte for byte and handed to the
// library's newline-delimited JSON stream.
const input = new ReadableStream({
  start(c) {
    child.stdout.on("data", (d) => {
      rawOut.write(d);
      c.enqueue(new Uint8Array(d));
    });
    child.stdout.on("end", () => c.close());
    child.stdout.on("error", (e) => c.error(e));
  },
});
const output = Writable.toWeb(child.stdin);
const stream = acp.ndJsonStream(output, input);

const buffers = plan.buffers ?? {};
const answers = [...(plan.answers ?? [])];
let disconnected = false;
let onToolCall = null;

function disconnect() {
  disconnected = true;
  child.stdin.end();
}

const app = acp
  .client({ name: "ralph-e2e-editor" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    note({ event: "update", params });
    if (params.update?.sessionUpdate === "tool_call" && onToolCall) onToolCall(params);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const answer = answers.length > 0 ? answers.shift() : "yes";
    note({ event: "request", method: "session/request_permission", params, answer });
    if (answer === "disconnect") {
      disconnect();
      return new Promise(() => {}); // never answered: the editor is gone
    }
    if (answer === "cancel") return { outcome: { outcome: "cancelled" } };
    const kind = { yes: "allow_once", always: "allow_always", no: "reject_once" }[answer];
    const opt = params.options.find((o) => o.kind === kind);
    if (!opt) throw new Error(`no ${kind} option among ${JSON.stringify(params.options)}`);
    return { outcome: { outcome: "selected", optionId: opt.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    note({ event: "request", method: "fs/read_text_file", params });
    await pause();
    if (Object.hasOwn(buffers, params.path)) return { content: buffers[params.path] };
    try {
      return { content: readFileSync(params.path, "utf8") };
    } catch {
      throw acp.RequestError.resourceNotFound(params.path);
    }
  })
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    note({ event: "request", method: "fs/write_text_file", params });
    await pause();
    buffers[params.path] = params.content;
    if (plan.writeDisk) writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("*", ({ method, params }) => {
    note({ event: "request", method, params, refused: true });
    throw acp.RequestError.methodNotFound(method);
  });

async function call(ctx, method, params) {
  note({ event: "call", method, params });
  try {
    const result = await ctx.request(method, params);
    note({ event: "result", method, result: result ?? null });
    return result;
  } catch (e) {
    note({ event: "error", method, message: String(e?.message ?? e), code: e?.code, data: e?.data });
    return undefined;
  }
}

async function run(ctx) {
  const init = await call(ctx, acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: !!plan.fs?.read, writeTextFile: !!plan.fs?.write },
      terminal: true,
    },
    clientInfo: { name: "ralph-e2e-editor", version: "1" },
  });
  if (!init) return;
  let sessionId = null;
  for (const step of plan.steps) {
    if (disconnected) break;
    switch (step.op) {
      case "new": {
        const r = await call(ctx, acp.methods.agent.session.new, { cwd: step.cwd, mcpServers: step.mcpServers ?? [] });
        sessionId = r?.sessionId ?? sessionId;
        break;
      }
      case "load":
        sessionId = step.sessionId;
        await call(ctx, acp.methods.agent.session.load, { sessionId, cwd: step.cwd, mcpServers: step.mcpServers ?? [] });
        break;
      case "setMode":
        await call(ctx, acp.methods.agent.session.setMode, { sessionId, modeId: step.modeId });
        break;
      case "procs": {
        // The processes whose command line holds step.pattern, as a
        // person would look for a command left running.
        const found = [];
        for (const pid of readdirSync("/proc")) {
          if (!/^[0-9]+$/.test(pid)) continue;
          try {
            const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
            if (cmdline.includes(step.pattern) && !cmdline.includes("client.mjs")) found.push(`${pid} ${cmdline}`);
          } catch {}
        }
        note({ event: "procs", result: found });
        break;
      }
      case "prompt": {
        let poll = null;
        if (step.cancelWhenFile !== undefined) {
          // Cancel once the command shows it has started.
          const id = sessionId;
          poll = setInterval(() => {
            if (!existsSync(step.cancelWhenFile)) return;
            clearInterval(poll);
            note({ event: "cancel" });
            ctx.notify(acp.methods.agent.session.cancel, { sessionId: id });
          }, 50);
        }
        if (step.cancelAfterToolCallMs !== undefined) {
          const id = sessionId;
          onToolCall = () => {
            onToolCall = null;
            setTimeout(() => {
              note({ event: "cancel" });
              ctx.notify(acp.methods.agent.session.cancel, { sessionId: id });
            }, step.cancelAfterToolCallMs);
          };
        }
        await call(ctx, acp.methods.agent.session.prompt, { sessionId, prompt: step.prompt ?? [{ type: "text", text: step.text }] });
        onToolCall = null;
        if (poll) clearInterval(poll);
        break;
      }
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  }
}

const conn = app.connect(stream);
const limit = setTimeout(() => {
  note({ event: "timeout" });
  child.kill("SIGKILL");
}, plan.limitMs ?? 120000);
try {
  await run(conn.agent);
} catch (e) {
  note({ event: "failure", message: String(e?.stack ?? e) });
}
// The editor goes away: the agent sees its standard input end and exits.
if (!disconnected) child.stdin.end();
await exited;
clearTimeout(limit);
conn.close();
await new Promise((r) => rawOut.end(r));
await new Promise((r) => rawErr.end(r));
writeFileSync(logPath, JSON.stringify(log, null, 1));
process.exit(0);
