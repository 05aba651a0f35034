import { perGroup, type Usage } from './api.ts';
import { count, usd } from './format.ts';
import { GROUP_LABELS, useGroupNames } from './groups.ts';
import { TableScroll } from './TableScroll.tsx';

/** The window's usage per group (model, collection, API key or user), the most tokens first, with the totals below. */
export function Breakdown({ usage, me, emails }: { usage: Usage; me: string | undefined; emails?: ReadonlyMap<string, string> }) {
  const name = useGroupNames(usage.group_by, me, emails);
  const groups = perGroup(usage.rows);
  const label = GROUP_LABELS[usage.group_by];
  if (groups.length === 0) return <p>No usage in this window.</p>;
  const cost = (value: number | null) => (value === null ? 'no price' : usd(value));
  return (
    <TableScroll label={`Usage by ${label.toLowerCase()}`}>
      <table class="breakdown">
        <caption class="visually-hidden">
          Usage by {label.toLowerCase()}, {usage.since} to {usage.until}
        </caption>
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" class="num">
              Calls
            </th>
            <th scope="col" class="num">
              Input tokens
            </th>
            <th scope="col" class="num">
              Output tokens
            </th>
            {usage.priced && (
              <th scope="col" class="num">
                Cost
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {groups.map((group) => (
            <tr key={group.group ?? ''} data-group={group.group ?? ''}>
              <th scope="row" title={group.group ?? undefined}>
                {name(group.group)}
              </th>
              <td class="num">{count(group.calls)}</td>
              <td class="num">{count(group.input)}</td>
              <td class="num">{count(group.output)}</td>
              {usage.priced && <td class="num">{cost(group.cost)}</td>}
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">All</th>
            <td class="num">{count(usage.totals.calls)}</td>
            <td class="num">{count(usage.totals.input_tokens)}</td>
            <td class="num">{count(usage.totals.output_tokens)}</td>
            {usage.priced && <td class="num">{cost(usage.totals.cost_usd)}</td>}
          </tr>
        </tfoot>
      </table>
    </TableScroll>
  );
}
