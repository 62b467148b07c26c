// The key to the timelines, drawn with the same classes as the timelines themselves so it
// cannot drift from them.
const swatch = (inner: string) =>
  `<svg class="timeline" viewBox="0 0 30 14" aria-hidden="true">${inner}</svg>`;
const band = (cls: string, fill = '') =>
  swatch(`<g class="band ${cls}"><rect x="1" y="1" width="28" height="12" rx="2"${fill}/></g>`);

export function renderLegend(): string {
  const hatch =
    '<defs><pattern id="legend-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
    '<rect class="hatch-bg" width="6" height="6"/><line class="hatch-line" x1="0" y1="0" x2="0" y2="6"/></pattern></defs>';
  const items = [
    [band('ready s-true'), 'ready = true'],
    [band('serving s-true'), 'serving = true'],
    [band('terminating s-true'), 'terminating = true'],
    [
      swatch(
        `${hatch}<g class="band s-false"><rect x="1" y="1" width="28" height="12" rx="2" fill="url(#legend-hatch)"/></g>`,
      ),
      'false (hatched)',
    ],
    [band('s-absent'), 'absent: no slice lists this Pod'],
    [swatch('<g class="mark"><circle cx="15" cy="7" r="4"/></g>'), 'an event: hover for the raw event'],
    [
      swatch(
        '<g class="mark evidence"><circle class="ring" cx="15" cy="7" r="6"/><circle cx="15" cy="7" r="3.5"/></g>',
      ),
      'evidence the verdict rests on (id shown)',
    ],
    [swatch('<g class="mark key"><circle cx="15" cy="7" r="4"/></g>'), 'first terminating endpoint'],
    [swatch('<line class="guide-line guide-delete" x1="15" x2="15" y1="0" y2="14"/>'), 'DELETE requested'],
  ];
  return `<p class="legend" aria-hidden="true">${items.map(([s, t]) => `<span>${s}${t}</span>`).join('')}</p>`;
}
