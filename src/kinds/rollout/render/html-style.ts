// The rollout page's own stylesheet, after the lab page's (src/report/html/style.ts, whose
// colours, tables, legend and tooltip it reuses). Failure classes get warm, distinct colours and
// completed requests a pale green, so failures stand out; colour is never the only signal:
// each bar, band and mark has a tooltip, and the lists name every class in words.
const palette = [
  '#d1242f',
  '#8250df',
  '#e16f24',
  '#bf8700',
  '#a40e26',
  '#db61a2',
  '#6e7781',
  '#7d4e00',
  '#fa4549',
  '#0550ae',
  '#57606a',
  '#953800',
  '#1b7c83',
  '#6639ba',
  '#bc4c00',
  '#cf222e',
  // HTTP/2's classes (stream-refused, stream-reset, session-lost).
  '#0969da',
  '#8a4600',
  '#4d2d8c',
  // gRPC's classes (rpc-refused, rpc-connection-lost, rpc-reset, grpc-status).
  '#116329',
  '#9a6700',
  '#7d2a8c',
  '#1f6feb',
  // WebSocket's classes (ws-unacknowledged, ws-going-away).
  '#a0111f',
  '#0a3069',
];

export const rolloutStyle = `
.rollout-chart .ok{fill:var(--good);fill-opacity:.35}.rollout-chart .failed{fill:var(--bad)}
${palette.map((c, i) => `.fc${i}{fill:${c}}`).join('')}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;vertical-align:-1px;margin-right:4px}
${palette.map((c, i) => `.swatch.fc${i}{background:${c}}`).join('')}
.swatch.ok{background:var(--good);opacity:.45}.swatch.failed{background:var(--bad)}
.rollout-chart .fail-bg{fill:var(--bad-bg);fill-opacity:.5}.bad-text{fill:var(--bad)!important}
.rollout-chart .grid-zero{stroke:var(--fg);stroke-dasharray:none;stroke-opacity:.5}
.win rect{stroke:var(--bg)}.win-before rect{fill:var(--waiting)}.win-during rect{fill:var(--warn-bg)}.win-after rect{fill:var(--running)}
.win text{font-size:10px}
.lat-p50,.lat-p99,.rs-old,.rs-new{fill:none;stroke-width:1.6}
.lat-p50{stroke:var(--serving)}.lat-p99{stroke:var(--key);stroke-width:2.2;stroke-dasharray:5 2}
.rs-old{stroke:var(--muted)}.rs-new{stroke:var(--ready)}
.rollout-chart .hit{fill:transparent}
.rollout-chart .pod-starting{fill:var(--waiting);stroke:var(--muted);stroke-width:.5}.rollout-chart .pod-ready{fill:var(--ready);fill-opacity:.55}
.rollout-chart .pod-terminating{fill:var(--terminating);fill-opacity:.6}
.ep-term path{fill:var(--key)}.ep-removed path{stroke:var(--fg);stroke-width:2;stroke-dasharray:2 1}
.pod-gone path{stroke:var(--bad);stroke-width:2.5}
.guide-start .guide-line{stroke:var(--fg);stroke-dasharray:5 3}.guide-start rect{fill:var(--bg);stroke:var(--fg)}
.guide-complete .guide-line{stroke:var(--good)}.guide-complete rect{fill:var(--bg);stroke:var(--good)}.guide-complete text{fill:var(--good)}
.fail-list{margin:4px 0}.fail-list summary{cursor:pointer}.fail-list table{margin:6px 0 10px}
.fail-list td,.fail-list th{font-size:12px;padding:3px 6px}
.num{text-align:right;font-variant-numeric:tabular-nums}
.legend-block{margin:8px 0 12px}.legend-block dl{display:grid;grid-template-columns:max-content 1fr;gap:3px 10px;font-size:12px;margin:4px 0}
.legend-block dt{white-space:nowrap}.legend-block dd{margin:0;color:var(--muted)}
.legend-block svg{width:30px;height:14px;vertical-align:-2px}
`;
