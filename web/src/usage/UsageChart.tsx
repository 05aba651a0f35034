import type { DayTotal } from './api.ts';
import { compactCount, count } from './format.ts';

const [WIDTH, HEIGHT] = [640, 240];
const PAD = { left: 52, right: 12, top: 14, bottom: 28 };

/** The smallest 1, 2 or 5 × 10ⁿ at or above `value`: the axis' top, so that its labels are round. */
function roundUp(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

/** Every label on a week, one in five on a month, one in fifteen on a quarter: they stay apart. */
const labelEvery = (days: number) => (days <= 10 ? 1 : days <= 35 ? 5 : 15);

/** How the chart reads aloud: the window, the whole, and the busiest day. */
function summary(days: DayTotal[]): string {
  const total = days.reduce((sum, day) => sum + day.input + day.output, 0);
  const window = `${days[0]?.date} to ${days.at(-1)?.date}`;
  if (total === 0) return `Tokens per UTC day, ${window}: none.`;
  const busiest = days.reduce((most, day) => (day.input + day.output > most.input + most.output ? day : most));
  return (
    `Input and output tokens per UTC day, ${window}: ${count(total)} in all; the most on ${busiest.date}, ` +
    `${count(busiest.input)} input and ${count(busiest.output)} output. The figures follow as a table.`
  );
}

/**
 * Input and output tokens per UTC day as stacked bars, drawn in the theme's chart colours (styles.css), with the
 * same figures as a table for screen readers and for anyone who wants the numbers.
 */
export function UsageChart({ days }: { days: DayTotal[] }) {
  const top = roundUp(Math.max(0, ...days.map((day) => day.input + day.output)));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(1, slot * 0.7);
  const y = (tokens: number) => PAD.top + plotHeight - (tokens / top) * plotHeight;
  const every = labelEvery(days.length);
  const last = days.length - 1;
  // The last day always, and every `every`th before it that is not too close to it.
  const labelled = (i: number) => i === last || (i % every === 0 && last - i >= Math.ceil(every / 2));
  const used = days.filter((day) => day.input + day.output + day.calls > 0);
  return (
    <figure class="stack usage-figure">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary(days)} class="chart usage-chart">
        {[0, top / 2, top].map((tokens) => (
          <g key={tokens}>
            <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(tokens)} y2={y(tokens)} />
            <text x={PAD.left - 6} y={y(tokens) + 4} text-anchor="end">
              {compactCount(tokens)}
            </text>
          </g>
        ))}
        {days.map((day, i) => {
          const x = PAD.left + i * slot + (slot - barWidth) / 2;
          return (
            <g key={day.date} data-date={day.date}>
              <title>
                {day.date}: {count(day.input)} input, {count(day.output)} output tokens
              </title>
              {day.input > 0 && <rect class="input" x={x} width={barWidth} y={y(day.input)} height={y(0) - y(day.input)} />}
              {day.output > 0 && (
                <rect
                  class="output"
                  x={x}
                  width={barWidth}
                  y={y(day.input + day.output)}
                  height={y(day.input) - y(day.input + day.output)}
                />
              )}
              {labelled(i) && (
                <text x={x + barWidth / 2} y={HEIGHT - 8} text-anchor="middle">
                  {day.date.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption class="row">
        <span>
          <span class="swatch usage-input" /> Input tokens
        </span>
        <span>
          <span class="swatch usage-output" /> Output tokens
        </span>
        <span class="hint">Days are UTC.</span>
      </figcaption>
      <details>
        <summary>The figures, day by day</summary>
        {used.length === 0 ? (
          <p>No usage on any day of this window.</p>
        ) : (
          <table class="figures-table">
            <caption class="visually-hidden">Tokens and calls per UTC day; days without usage are left out</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Input tokens
                </th>
                <th scope="col" class="num">
                  Output tokens
                </th>
                <th scope="col" class="num">
                  Calls
                </th>
              </tr>
            </thead>
            <tbody>
              {used.map((day) => (
                <tr key={day.date}>
                  <th scope="row">{day.date}</th>
                  <td class="num">{count(day.input)}</td>
                  <td class="num">{count(day.output)}</td>
                  <td class="num">{count(day.calls)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </details>
    </figure>
  );
}
