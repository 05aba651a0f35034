/**
 * One finding of `npm run deploy -- --check`. `unchecked`: the check needs something this run does not
 * have (a Cloudflare login, the network, a real Hyperdrive id) and says so; `--check` still passes, a
 * deploy does not go ahead.
 */
export interface CheckResult {
  status: 'pass' | 'warn' | 'fail' | 'unchecked';
  /** What was checked: a setting, a worker, a service. */
  subject: string;
  /** Plain words; never a setting's value. */
  message: string;
}

const MARK: Record<CheckResult['status'], string> = { pass: 'ok', warn: 'WARN', fail: 'FAIL', unchecked: 'NOT CHECKED' };

export const formatCheck = (check: CheckResult) => `  ${MARK[check.status].padEnd(11)} ${check.subject}: ${check.message}`;
