// Where labels go when marks crowd: the most important label first, each in the first row
// where it overlaps nothing, written right of its mark or, failing that, left of it. Labels
// that find no room in `maxRows` are left out of the drawing; their mark keeps its tooltip.

/**
 * Estimated width of a label in SVG user units: no text is measured when building strings, so
 * this errs wide (DejaVu Sans, Debian's default, is one of the widest sans fonts).
 */
export function textWidth(text: string, fontSize = 11, bold = false): number {
  return text.length * fontSize * (bold ? 0.68 : 0.61);
}

export interface LabelRequest<T> {
  item: T;
  x: number;
  label: string;
  priority: number;
  bold?: boolean;
}

export interface PlacedLabel<T> extends LabelRequest<T> {
  row: number;
  anchor: 'start' | 'end';
  /** x of the text anchor. */
  textX: number;
}

const gap = 6;
const offset = 6;

export function placeLabels<T>(
  requests: ReadonlyArray<LabelRequest<T>>,
  bounds: [number, number],
  maxRows = 3,
  fontSize = 11,
): { placed: Array<PlacedLabel<T>>; rows: number } {
  const occupied: Array<Array<[number, number]>> = Array.from({ length: maxRows }, () => []);
  const placed: Array<PlacedLabel<T>> = [];
  const order = requests.filter((r) => r.label !== '').sort((a, b) => b.priority - a.priority || a.x - b.x);
  for (const request of order) {
    const width = textWidth(request.label, fontSize, request.bold);
    const candidates: Array<[number, number, 'start' | 'end', number]> = [
      [request.x + offset - 3, request.x + offset + width, 'start', request.x + offset],
      [request.x - offset - width, request.x - offset + 3, 'end', request.x - offset],
    ];
    const fits = ([a, b]: [number, number, ...unknown[]]) => a >= bounds[0] && b <= bounds[1];
    search: for (let row = 0; row < maxRows; row++) {
      for (const c of candidates.filter(fits)) {
        const [a, b, anchor, textX] = c;
        if (occupied[row]!.some(([oa, ob]) => a < ob + gap && b > oa - gap)) continue;
        occupied[row]!.push([a, b]);
        placed.push({ ...request, row, anchor, textX });
        break search;
      }
    }
  }
  const rows = placed.reduce((n, p) => Math.max(n, p.row + 1), 0);
  return { placed, rows };
}
