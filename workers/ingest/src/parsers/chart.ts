import type { ParseBudget } from './budget.ts';
import { formatKind, formatNumber } from './number-format.ts';
import { cleanCell } from './table-rows.ts';
import type { Block } from './types.ts';
import { type ScanHandler, SKIP, scan } from './xml-scan.ts';
import type { XmlText } from './xml-window.ts';

/**
 * Charts (`c:chartSpace` parts, DrawingML): the text a chart shows — its title, axis titles,
 * series names, categories and values — read from the values the chart caches, so that a
 * deck of charts answers questions about them. One paragraph names the chart, then one
 * table row per category keyed by the series names ("Quarter: Q2; North: 12; South: 9"), as
 * a table's rows are. The part is scanned once as it inflates; no tree is built.
 */

/** Points read per series (categories and values each); the rest are left out with a warning. */
export const MAX_CHART_POINTS = 1_000;

/** Series read per chart: Excel's own limit; more come only from a file made to cost work. */
export const MAX_CHART_SERIES = 255;

export const CHART_CUT_WARNING = `A chart has more than ${MAX_CHART_SERIES} series or more than ${MAX_CHART_POINTS.toLocaleString('en-US')} points in a series; only the first of each were read`;

type Place = Omit<Block, 'kind' | 'text'>;

interface Series {
  /** The plot holding it (`c:barChart`, `c:lineChart`, ...). */
  plot: string;
  name: string;
  /** By point index; scatter and bubble charts' x values are their categories. */
  categories: string[];
  values: string[];
}

type Role = 'name' | 'category' | 'value';

// A series' children whose points are read; bubble sizes, data labels and extensions are not.
const ROLES: Record<string, Role> = {
  'c:tx': 'name',
  'c:cat': 'category',
  'c:xVal': 'category',
  'c:val': 'value',
  'c:yVal': 'value',
};

const CATEGORY_AXES = new Set(['c:catAx', 'c:dateAx']);
const AXES = new Set(['c:catAx', 'c:dateAx', 'c:valAx', 'c:serAx']);

/** What one pass over a chart part finds. */
interface ChartText {
  title: string;
  axes: { axis: string; title: string }[];
  series: Series[];
  cut: boolean;
}

/** Reads a chart part (whole or in pieces) into its text. */
export function readChart(xml: XmlText, budget: ParseBudget): ChartText {
  const chart: ChartText = { title: '', axes: [], series: [], cut: false };
  const open: string[] = [];
  let series: Series | null = null;
  let role: Role | null = null;
  // The series child open now, as the depth it sits at, so that its close ends the role.
  let roleDepth = -1;
  let point = -1;
  let pointText = '';
  let pointFormat = '';
  let cacheFormat = '';
  let levels = 0;
  let title: { owner: string; text: string; depth: number } | null = null;
  let formatCode: string | null = null;

  const handler: ScanHandler = {
    open(name, attrs) {
      const parent = open[open.length - 1] ?? '';
      // Extensions repeat or decorate what the chart already says.
      if (name === 'c:extLst') return SKIP;
      if (name === 'c:ser') {
        series = null;
        if (chart.series.length >= MAX_CHART_SERIES) {
          chart.cut = true;
          return SKIP;
        }
        series = { plot: parent, name: '', categories: [], values: [] };
        chart.series.push(series);
      } else if (series && parent === 'c:ser') {
        role = ROLES[name] ?? null;
        roleDepth = open.length + 1;
        levels = 0;
      } else if (name === 'c:title' && !title) {
        title = { owner: parent, text: '', depth: open.length + 1 };
      } else if (name === 'c:formatCode') {
        formatCode = '';
      } else if (name === 'c:lvl' && role) {
        // Multi-level categories: the innermost level (the first) names each point.
        if (++levels > 1) return SKIP;
      } else if (name === 'c:pt' && series && role) {
        const idx = Number.parseInt(attrs.idx ?? '', 10);
        if (!(idx >= 0)) return SKIP;
        if (role !== 'name' && idx >= MAX_CHART_POINTS) {
          chart.cut = true;
          return SKIP;
        }
        point = idx;
        pointText = '';
        pointFormat = attrs.formatCode ?? '';
      }
      // Only elements whose close will be reported are on the stack (a skipped one's is not).
      open.push(name);
      return undefined;
    },
    text(text) {
      const name = open[open.length - 1];
      if (name === 'c:formatCode' && formatCode !== null) formatCode += text;
      else if (title && (name === 'a:t' || name === 'c:v')) title.text += text;
      else if (name === 'c:v' && series && role === 'name') series.name += text;
      else if (name === 'c:v' && point >= 0) pointText += text;
    },
    close(name) {
      const depth = open.length;
      open.pop();
      if (title && depth === title.depth) {
        const text = title.text.replace(/\s+/g, ' ').trim();
        if (text !== '' && title.owner === 'c:chart') chart.title ||= text;
        else if (text !== '' && AXES.has(title.owner)) chart.axes.push({ axis: title.owner, title: text });
        title = null;
      } else if (title && name === 'a:p') {
        title.text += ' ';
      } else if (name === 'c:formatCode') {
        cacheFormat = formatCode ?? '';
        formatCode = null;
      } else if (name === 'c:pt' && point >= 0 && series) {
        if (role === 'category') series.categories[point] = cellText(pointText, pointFormat || cacheFormat);
        else if (role === 'value') series.values[point] = cellText(pointText, pointFormat || cacheFormat, true);
        else if (role === 'name') series.name += ' ';
        point = -1;
      } else if (depth === roleDepth) {
        role = null;
        roleDepth = -1;
        cacheFormat = '';
      } else if (name === 'c:ser') {
        series = null;
      }
    },
  };
  scan(xml, handler, budget);
  for (const s of chart.series) s.name = cleanCell(s.name);
  return chart;
}

/** A cached value as the chart shows it: numbers in their format, text as it is. */
function cellText(raw: string, format: string, numeric = false): string {
  const text = raw.trim();
  const n = Number(text);
  if (text === '' || !Number.isFinite(n) || (!numeric && format === '')) return text;
  return formatNumber(n, formatKind(format || 'General'));
}

/**
 * Appends the blocks a chart part makes to `out`, placed where the chart sits, as they are made:
 * when the budget runs out in the middle of a chart, the rows before the stop are kept. A chart
 * with nothing to say adds nothing. With `headingLevel`, a titled chart's title is also a heading
 * at that level (it names a slide that has no title of its own); returns whether it made one.
 */
export function chartBlocks(xml: XmlText, place: Place, budget: ParseBudget, out: Block[], headingLevel?: number): boolean {
  const chart = readChart(xml, budget);
  if (chart.cut) budget.note(CHART_CUT_WARNING);
  if (chart.title === '' && chart.series.length === 0 && chart.axes.length === 0) return false;
  const headed = headingLevel !== undefined && chart.title !== '';
  if (headed) out.push({ kind: 'heading', text: budget.take(chart.title), level: headingLevel, ...place });
  const named = chart.series.map((s, i) => ({ ...s, name: s.name || `Series ${i + 1}` }));
  const plots = [...new Set(named.map((s) => plotName(s.plot)).filter((p) => p !== ''))];
  const summary = [
    chart.title !== '' ? `Chart: ${chart.title}.` : 'Chart.',
    plots.length > 0 ? `${capitalise(plots.join(' and '))} chart.` : '',
    chart.axes.length > 0 ? `Axes: ${chart.axes.map((a) => a.title).join('; ')}.` : '',
    named.length > 0 ? `Series: ${named.map((s) => s.name).join('; ')}.` : '',
  ]
    .filter((part) => part !== '')
    .join(' ');
  out.push({ kind: 'paragraph', text: budget.take(summary), ...place });
  const scatter = named.some((s) => s.plot === 'c:scatterChart' || s.plot === 'c:bubbleChart');
  const categoryTitle =
    chart.axes.find((a) => CATEGORY_AXES.has(a.axis))?.title ?? (scatter ? (chart.axes[0]?.title ?? 'X') : 'Category');
  for (const group of byCategories(named)) {
    const categories = group.find((s) => s.categories.length > 0)?.categories ?? [];
    let length = categories.length;
    for (const s of group) length = Math.max(length, s.values.length);
    for (let i = 0; i < length; i++) {
      // Each cell is work, filled or not: 255 series of one late point each still make 255,000.
      budget.work(group.length);
      // One row per category, keyed as a table's rows are ("Quarter: Q2; North: 12; South: 9").
      const parts = [`${categoryTitle}: ${cleanCell(categories[i] ?? String(i + 1))}`];
      for (const s of group) {
        const value = s.values[i];
        if (value !== undefined && value !== '') parts.push(`${s.name}: ${value}`);
      }
      if (parts.length > 1) out.push({ kind: 'table_row', text: budget.take(parts.join('; ')), ...place });
    }
  }
  return headed;
}

/**
 * Series grouped by the categories they are plotted against, in order: a bar chart's series
 * share theirs and make one table; a scatter chart's series each have their own x values.
 */
function byCategories(series: Series[]): Series[][] {
  const groups = new Map<string, Series[]>();
  for (const s of series) {
    const key = s.categories.join('\u0000');
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  // A series without categories of its own is plotted against the first series' ones.
  const bare = groups.get('');
  const first = groups.values().next().value;
  if (bare && first && first !== bare) {
    groups.delete('');
    first.push(...bare);
  }
  return [...groups.values()];
}

/** `c:bar3DChart` → "bar", `c:ofPieChart` → "pie", `c:doughnutChart` → "doughnut". */
function plotName(plot: string): string {
  const m = /^c:(?:of)?([a-zA-Z]+?)(?:3D)?Chart$/.exec(plot);
  return m ? m[1]!.toLowerCase() : '';
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
