// The page's stylesheet, inline. Colours are custom properties: light by default, dark under
// `prefers-color-scheme: dark` on screen, and always light on paper. Colour is never the only
// signal: bands carry their value as text, `false` is hatched, an absent endpoint is dashed.
const light = `--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--lane:#f6f8fa;--lane-alt:#fff;
--ready:#1a7f37;--serving:#0969da;--terminating:#9a6700;--on-true:#fff;--hatch-bg:#eef1f4;--hatch-line:#8c959f;
--good:#1a7f37;--good-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;
--key:#8250df;--evidence:#bf3989;--phase:#ddf4ff;--running:#dafbe1;--waiting:#eef1f4;--terminated:#d1d9e0;`;

const dark = `--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--lane:#151b23;--lane-alt:#0d1117;
--ready:#3fb950;--serving:#4493f8;--terminating:#d29922;--on-true:#0d1117;--hatch-bg:#212830;--hatch-line:#656c76;
--good:#3fb950;--good-bg:#12361f;--bad:#f85149;--bad-bg:#3d1618;--warn:#d29922;--warn-bg:#3a2a05;
--key:#ab7df8;--evidence:#f778ba;--phase:#0c2d6b;--running:#12361f;--waiting:#212830;--terminated:#3d444d;`;

const page = `
:root{color-scheme:light dark;${light}}
@media screen and (prefers-color-scheme:dark){:root{${dark}}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header,main{max-width:1240px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:16px;margin:0 0 6px}.table-wrap+h3{margin-top:18px}h3 small{color:var(--muted);font-weight:400;font-size:12px}
a{color:var(--serving)}code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.meta,.note,figcaption,.reason{color:var(--muted)}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
caption{text-align:left;color:var(--muted);padding:4px 0 8px}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
thead th{background:var(--lane)}
tr.incomplete th,tr.incomplete td{background:var(--warn-bg)}
.verdict{display:inline-block;padding:0 6px;border-radius:4px;font-weight:600;white-space:nowrap}
.verdict-accepted-request-finished{background:var(--good-bg);color:var(--good)}
.verdict-accepted-request-cut,.verdict-accepted-request-failed{background:var(--bad-bg);color:var(--bad)}
.verdict-inconclusive{background:var(--warn-bg);color:var(--warn)}
td.verdict{display:table-cell;border-radius:0}
.incomplete-badge{color:var(--warn);font-weight:600;font-size:12px}
.incomplete-banner{border-left:4px solid var(--warn);background:var(--warn-bg);padding:6px 10px;margin:6px 0}
.explanations li{margin:4px 0}
.run{margin:22px 0 30px;padding-top:10px;border-top:1px solid var(--line)}
.verdict-line{margin:4px 0}
.evidence{font-size:13px;margin:4px 0}.evidence ul{display:inline;padding:0;margin:0 0 0 6px}
.evidence li{display:inline;margin-right:12px}
.evidence-link code{color:var(--evidence);font-weight:700}
.facts{display:flex;flex-wrap:wrap;gap:2px 18px;margin:6px 0 8px;font-size:12px}
.facts div{display:flex;gap:5px}.facts dt{color:var(--muted)}.facts dd{margin:0}
figure{margin:0}figcaption{font-size:12px;margin:4px 0}.close-up{margin-top:14px}.stacked{margin-top:14px}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;font-size:12px;color:var(--muted);align-items:center;margin:8px 0}
.legend span{display:inline-flex;gap:5px;align-items:center}.legend svg{width:30px;height:14px}
#tip{position:fixed;z-index:10;max-width:520px;background:var(--bg);color:var(--fg);border:1px solid var(--muted);
border-radius:6px;padding:6px 8px;box-shadow:0 4px 14px rgba(0,0,0,.25);pointer-events:none;font-size:12px}
#tip .tip-head{font-weight:600}#tip pre{margin:4px 0 0;white-space:pre-wrap;word-break:break-all;
font:11px/1.35 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:60vh;overflow:hidden}
[hidden]{display:none!important}`;

const svg = `
.timeline{display:block;width:100%;height:auto;font:11px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.timeline text{fill:var(--fg)}
.tick,.row-name{fill:var(--muted)!important;font-size:10px}
.lane-name,.run-title{font-weight:700;font-size:12.5px}a .run-title{fill:var(--serving)}.exit-note{font-weight:700}.lane-note{fill:var(--muted)!important;font-style:italic}
.lane-bg{fill:var(--lane);fill-opacity:.75}.lane:nth-of-type(even) .lane-bg{fill:var(--lane-alt)}
.grid{stroke:var(--line);stroke-dasharray:2 3}.row-axis{stroke:var(--line)}
.band:where(:not(.s-false,.s-open)) rect{fill:var(--waiting)}.band text{font-size:10px}
.ready.s-true rect{fill:var(--ready)}.serving.s-true rect{fill:var(--serving)}.terminating.s-true rect{fill:var(--terminating)}
.s-true text{fill:var(--on-true);font-weight:700}
.s-absent rect,.s-deleted rect,.s-none rect{fill:none;stroke:var(--muted);stroke-dasharray:3 2}
.hatch-bg{fill:var(--hatch-bg)}.hatch-line{stroke:var(--hatch-line);stroke-width:2}
.phase rect{fill:var(--phase);stroke:var(--bg)}
.s-good rect{fill:var(--good-bg);stroke:var(--good)}.s-bad rect{fill:var(--bad-bg);stroke:var(--bad)}
.s-open rect{stroke:var(--muted)}
.container.s-running rect{fill:var(--running)}.container.s-terminated rect{fill:var(--terminated)}
.mark circle{fill:var(--muted);stroke:var(--bg);stroke-width:1}.mark line{stroke:var(--line)}
.mark.good circle{fill:var(--good)}.mark.bad circle{fill:var(--bad)}.mark.warn circle{fill:var(--warn)}
.mark.key circle{fill:var(--key)}.mark.bad text{fill:var(--bad)}.mark.key text{fill:var(--key);font-weight:700}
.mark .ring,.mark.evidence .ring{fill:none;stroke:var(--evidence);stroke-width:2.5}.mark.evidence text{font-weight:700}
.mark:hover circle,.mark.highlight circle,.mark:target circle{stroke:var(--fg);stroke-width:2}
.mark.highlight .ring,.mark:target .ring{stroke:var(--evidence);stroke-width:5}
.guide-line{stroke-width:1.5;fill:none}
.guide-delete .guide-line,.guide-line.guide-delete{stroke:var(--bad);stroke-dasharray:5 3}
.guide-fte .guide-line,.guide-line.guide-fte{stroke:var(--key)}
.guide-exit .guide-line,.guide-line.guide-exit{stroke:var(--fg);stroke-dasharray:1 2}
.guide rect{fill:var(--bg);stroke-width:1.2}.guide text{font-weight:700}
.guide-delete rect{stroke:var(--bad)}.guide-delete text{fill:var(--bad)}
.guide-fte rect{stroke:var(--key)}.guide-fte text{fill:var(--key)}
.guide-exit rect{fill:var(--fg);stroke:var(--fg)}.guide-exit text{fill:var(--bg)}`;

const print = `
@media print{
@page{size:A4 landscape;margin:10mm}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{font-size:11px}header,main{max-width:none;padding:0}
#tip{display:none!important}
a{color:inherit;text-decoration:none}
figure,tr{break-inside:avoid}.run{break-before:page;border-top:0}
}`;

export const pageStyle = `${page}${svg}${print}`.trim();
