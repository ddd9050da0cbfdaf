package report

// htmlSource is the HTML report's template: inline CSS and SVG only, so
// the file needs nothing but itself. html/template escapes every value
// by where it lands (text, attribute, SVG).
const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ralph session {{.ID}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; border-bottom: 1px solid #d8dce3; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
.sub { color: #5b6473; margin: 0 0 16px; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 10px; }
.fact { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 8px 10px; }
.fact b { display: block; font-size: 12px; color: #5b6473; font-weight: 500; }
.card { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eceef2; vertical-align: top; }
th { color: #5b6473; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f0f2f5; padding: 1px 4px; border-radius: 3px; word-break: break-all; }
.state-done { color: #1f7a43; } .state-failed { color: #b42323; } .state-in_progress, .state-open { color: #8a5a00; }
.none { color: #7a8290; }
.why { color: #4a5160; font-size: 90%; }
svg { width: 100%; height: auto; display: block; }
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg .tick { stroke: #e3e6eb; } svg .ticklabel { fill: #7a8290; font-size: 11px; }
svg .bar { fill: #e4e7ec; }
svg .attempt.done { fill: #2e9d57; } svg .attempt.retry { fill: #e0a030; } svg .attempt.failed { fill: #d64545; }
svg .attempt.stopped { fill: #9aa1ab; } svg .attempt.running { fill: #3a7bd5; }
svg .agent { fill: #7b6fd6; } svg .agent.failed { fill: #d64545; }
svg .heading { font-weight: 600; fill: #5b6473; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; color: #5b6473; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
/* The timeline as a list, for a screen too narrow to read the picture's
   labels (a phone's): each task and agent on lines of its own that wrap,
   marked with the colour its bar has in the picture. */
.steps { display: none; list-style: none; margin: 0; padding: 0; }
.steps li { padding: 6px 0 6px 10px; border-bottom: 1px solid #eceef2; border-left: 4px solid #9aa1ab; overflow-wrap: anywhere; }
.steps li.done { border-left-color: #2e9d57; } .steps li.retry { border-left-color: #e0a030; } .steps li.failed { border-left-color: #d64545; }
.steps li.running { border-left-color: #3a7bd5; } .steps li.agent { border-left-color: #7b6fd6; }
.steps .when, .steps .how { color: #5b6473; font-size: 13px; }
.steps .heading { font-weight: 600; color: #5b6473; border-left: 0; padding-left: 0; }
@media (max-width: 600px) {
  main { padding: 12px; }
  #timeline, .timeline .legend { display: none; }
  .steps { display: block; }
  .facts { grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); }
}
</style>
</head>
<body>
<main>
<h1>Session report</h1>
<p class="sub">Session <code>{{.ID}}</code> · written {{.Written}}</p>
<div class="facts">
<div class="fact"><b>status</b>{{.Status}}</div>
<div class="fact"><b>mode · model</b>{{.Mode}} · {{.Model}}</div>
<div class="fact"><b>started</b>{{.Started}}</div>
<div class="fact"><b>duration</b>{{.Duration}}</div>
<div class="fact"><b>tokens</b>{{.Tokens}}</div>
<div class="fact"><b>cost</b>{{.Cost}}</div>
{{if .Cache}}<div class="fact"><b>prompt cache</b>{{.Cache}}</div>{{end}}
<div class="fact"><b>tasks</b>{{.TaskLine}}</div>
</div>
{{range .Notes}}<p class="sub">Note: {{.}}</p>{{end}}
{{range .Links}}<p class="sub">Session {{.}}</p>{{end}}

<h2>Timeline</h2>
<div class="card timeline">
{{if .Chart.Empty}}<p class="none">No tasks or agents in this session.</p>{{else}}
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{.Chart.Width}} {{.Chart.Height}}" role="img" aria-label="timeline of tasks and agents">
{{range .Chart.Ticks}}<line class="tick" x1="{{f1 .X}}" y1="18" x2="{{f1 .X}}" y2="{{$.Chart.Height}}"/><text class="ticklabel" x="{{f1 .X}}" y="12" text-anchor="middle">{{.Label}}</text>
{{end}}{{range $row := .Chart.Tasks}}<g class="task" data-task="{{.ID}}"><title>{{.Title}}</title>
<text x="4" y="{{add .Y 12}}">{{.Label}}</text>
<rect class="{{.Bar.Class}}" x="{{f1 .Bar.X}}" y="{{.Y}}" width="{{f1 .Bar.W}}" height="16" rx="3"/>
{{range .Segments}}<rect class="{{.Class}}" x="{{f1 .X}}" y="{{$row.Y}}" width="{{f1 .W}}" height="16" rx="3"><title>{{.Title}}</title></rect>
{{end}}</g>
{{end}}{{if .Chart.AgentsY}}<text class="heading" x="4" y="{{.Chart.AgentsY}}">agents</text>
{{range .Chart.Agents}}<g class="agent-row" data-agent="{{.ID}}"><text x="4" y="{{add .Y 12}}">{{.Label}}</text>
<rect class="{{.Bar.Class}}" x="{{f1 .Bar.X}}" y="{{.Y}}" width="{{f1 .Bar.W}}" height="16" rx="3"><title>{{.Bar.Title}}</title></rect></g>
{{end}}{{end}}</svg>
<ol class="steps" aria-label="timeline of tasks and agents">
{{range .Chart.Tasks}}<li class="{{.Outcome}}" data-task="{{.ID}}"><span class="when">{{.When}}</span> <code>{{.ID}}</code> {{.Name}}<br><span class="how">{{.Words}}</span></li>
{{end}}{{if .Chart.Agents}}<li class="heading">agents</li>
{{range .Chart.Agents}}<li class="{{.Outcome}}" data-agent="{{.ID}}"><span class="when">{{.When}}</span> {{.Name}}<br><span class="how">{{.Words}}</span></li>
{{end}}{{end}}</ol>
<p class="legend"><span><i style="background:#2e9d57"></i>done</span><span><i style="background:#e0a030"></i>failed, retried</span><span><i style="background:#d64545"></i>failed</span><span><i style="background:#9aa1ab"></i>stopped</span><span><i style="background:#3a7bd5"></i>running</span><span><i style="background:#7b6fd6"></i>agent</span></p>
{{end}}
</div>

<h2>Tasks</h2>
<div class="card">
{{if .Tasks}}<table>
<tr><th>task</th><th>state</th><th>attempts</th><th>started</th><th>work time</th><th>tokens</th><th>cost</th><th>commands</th><th>verify</th><th>files changed</th></tr>
{{range .Tasks}}<tr><td><code>{{.ID}}</code> {{.Title}}{{if .LastError}}<br><span class="none">{{.LastError}}</span>{{end}}</td>
<td class="state-{{.State}}">{{.StateWords}}</td><td class="n">{{.Attempts}}</td><td class="n">{{.Start}}</td><td class="n">{{.Duration}}</td>
<td class="n">{{.Tokens}}</td><td class="n">{{.Cost}}</td><td class="n">{{.Commands}}{{if .FailedCmds}} ({{.FailedCmds}} failed){{end}}</td><td>{{.Verify}}</td>
<td>{{range .Files}}<code>{{.}}</code> {{else}}<span class="none">-</span>{{end}}</td></tr>
{{end}}</table>{{else}}<p class="none">This session worked on no tasks.</p>{{end}}
</div>

<h2>Insights</h2>
<div class="card">
<h3>Slowest tasks</h3>
{{with .Insights.Slowest}}<table><tr><th>task</th><th>work time</th><th>attempts</th><th>state</th></tr>
{{range .}}<tr><td><code>{{.ID}}</code> {{.Title}}</td><td class="n">{{dur .DurationMS}}</td><td class="n">{{.Attempts}}</td><td class="state-{{.State}}">{{state .State}}</td></tr>
{{end}}</table>{{else}}<p class="none">None.</p>{{end}}
<h3>Most retried tasks</h3>
{{with .Insights.MostRetried}}<table><tr><th>task</th><th>attempts</th><th>state</th></tr>
{{range .}}<tr><td><code>{{.ID}}</code> {{.Title}}</td><td class="n">{{.Attempts}}</td><td class="state-{{.State}}">{{state .State}}</td></tr>
{{end}}</table>{{else}}<p class="none">No task needed a second attempt.</p>{{end}}
<h3>Commands that fail most</h3>
{{with .Insights.FailingCommands}}<table><tr><th>command</th><th>failed</th><th>last failure</th></tr>
{{range .}}<tr><td><code>{{line .Command}}</code></td><td class="n">{{.Failures}}/{{.Runs}}</td><td>{{.LastFailure}}</td></tr>
{{end}}</table>{{else}}<p class="none">No command failed.</p>{{end}}
<h3>Errors by pattern</h3>
{{with .Insights.ErrorPatterns}}<table><tr><th>count</th><th>kinds</th><th>pattern</th><th>example</th></tr>
{{range .}}<tr><td class="n">{{.Count}}</td><td>{{kinds .Kinds}}</td><td><code>{{.Pattern}}</code></td><td>{{.Example}}</td></tr>
{{end}}</table>{{else}}<p class="none">No errors.</p>{{end}}
<h3>Cost per task</h3>
{{with .Insights.CostByTask}}<table><tr><th>task</th><th>cost</th><th>input tokens</th><th>output tokens</th></tr>
{{range .}}<tr><td><code>{{.ID}}</code> {{.Title}}</td><td class="n">{{money .CostUSD}}</td><td class="n">{{k .InputTokens}}</td><td class="n">{{k .OutputTokens}}</td></tr>
{{end}}</table>{{else}}<p class="none">No tasks.</p>{{end}}
<h3>Cost per agent</h3>
{{with .Insights.CostByAgent}}<table><tr><th>agent</th><th>task</th><th>cost</th><th>input tokens</th><th>output tokens</th></tr>
{{range .}}<tr><td><code>{{.Agent}}</code></td><td>{{.Task}}</td><td class="n">{{money .CostUSD}}</td><td class="n">{{k .InputTokens}}</td><td class="n">{{k .OutputTokens}}</td></tr>
{{end}}</table>{{else}}<p class="none">No agents.</p>{{end}}
</div>

<h2>Errors</h2>
<div class="card">
{{if .Errors}}<table id="errors"><tr><th>time</th><th>kind</th><th>message</th></tr>
{{range .Errors}}<tr><td class="n">{{.Time}}</td><td>{{.Kind}}</td><td>{{.Text}}</td></tr>
{{end}}</table>{{if .MoreErrors}}<p class="none">… and {{.MoreErrors}} more in errors.jsonl</p>{{end}}{{else}}<p class="none">No errors.</p>{{end}}
</div>

{{if .Reviews}}<h2>Reviews</h2>
<div class="card"><table id="reviews"><tr><th>task</th><th>reviews</th><th>tokens</th><th>time</th></tr>
{{range .Reviews}}<tr><td><code>{{.Task}}</code></td><td class="n">{{.Reviews}}</td><td class="n">{{.Tokens}}</td><td class="n">{{.Duration}}</td></tr>
{{end}}</table></div>
{{end}}<h2>Decisions</h2>
<div class="card">
{{if .Decisions}}<table id="decisions"><tr><th>time</th><th>decision</th><th>task, by</th><th>what, and why</th></tr>
{{range .Decisions}}<tr><td class="n">{{.Time}}</td><td>{{.Kind}}</td><td>{{.Who}}</td><td>{{.Text}}{{range .Why}}<br><span class="why">{{.}}</span>{{end}}</td></tr>
{{end}}</table>{{if .MoreDecisions}}<p class="none">… and {{.MoreDecisions}} more in decisions.jsonl</p>{{end}}{{if .LeftOutPicks}}<p class="none">{{counted .LeftOutPicks "routine task pick" "routine task picks"}} {{if eq .LeftOutPicks 1}}is{{else}}are{{end}} left out; decisions.jsonl has each with its reason.</p>{{end}}{{else}}<p class="none">No decisions recorded.</p>{{end}}
</div>
</main>
</body>
</html>
`
