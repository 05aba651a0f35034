import { keepPreviousData, useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { Failure } from '../Failure.tsx';
import { count, lastDays, usd, WINDOWS, type WindowDays } from '../usage/format.ts';
import { TableScroll } from '../usage/TableScroll.tsx';
import { When } from '../when.tsx';
import { adminKey, listUsers, PAGE } from './api.ts';
import { Pager } from './Pager.tsx';

/** Every account, the most tokens in the window first, with what it owns and what it spent; a page at a time. */
export function UsersSection() {
  const [days, setDays] = useState<WindowDays>(30);
  const [offset, setOffset] = useState(0);
  const window = lastDays(days);
  const users = useQuery({
    queryKey: [...adminKey, 'users', window.since, window.until, offset],
    queryFn: () => listUsers(window, offset),
    placeholderData: keepPreviousData,
  });
  const rows = users.data ?? [];
  const priced = rows.some((user) => user.cost_usd !== null);
  return (
    <section class="stack" aria-labelledby="admin-users">
      <h2 id="admin-users">Users and their usage</h2>
      <div class="row">
        <label>
          Usage over
          <select
            value={days}
            onChange={(event) => {
              setDays(Number(event.currentTarget.value) as WindowDays);
              setOffset(0);
            }}
          >
            {WINDOWS.map((n) => (
              <option key={n} value={n}>
                the last {n} days
              </option>
            ))}
          </select>
        </label>
      </div>
      {users.isPending && <p>Loading…</p>}
      <Failure error={users.error} />
      {users.data && rows.length === 0 && <p>No users on this page.</p>}
      {rows.length > 0 && (
        <TableScroll label="Users">
          <table class="users">
            <caption class="visually-hidden">
              Users, the most tokens from {window.since} to {window.until} first
            </caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col" class="num">
                  Collections
                </th>
                <th scope="col" class="num">
                  Documents
                </th>
                <th scope="col" class="num">
                  Calls
                </th>
                <th scope="col" class="num">
                  Input tokens
                </th>
                <th scope="col" class="num">
                  Output tokens
                </th>
                {priced && (
                  <th scope="col" class="num">
                    Cost
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {rows.map((user) => (
                <tr key={user.id} data-user={user.id}>
                  <th scope="row" title={user.id}>
                    {user.email ?? `No email (${user.id.slice(0, 8)})`}
                    {user.is_admin && <span class="badge">admin</span>}
                    <span class="hint user-dates">
                      joined <When iso={user.created_at} date />;{' '}
                      {user.last_sign_in_at ? (
                        <>
                          signed in <When iso={user.last_sign_in_at} />
                        </>
                      ) : (
                        'never signed in'
                      )}
                    </span>
                  </th>
                  <td class="num">{count(user.collections)}</td>
                  <td class="num">{count(user.documents)}</td>
                  <td class="num">{count(user.calls)}</td>
                  <td class="num">{count(user.input_tokens)}</td>
                  <td class="num">{count(user.output_tokens)}</td>
                  {priced && <td class="num">{user.cost_usd === null ? 'no price' : usd(user.cost_usd)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Pager offset={offset} shown={rows.length} limit={PAGE} what="users" onOffset={setOffset} />
    </section>
  );
}
