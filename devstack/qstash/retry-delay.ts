/**
 * Upstash-Retry-Delay: an arithmetic expression in `retried` (retries so far, from 0)
 * giving the delay in milliseconds, e.g. `pow(2, retried) * 1000`. Parsed once at
 * publish so a bad expression is a 400 then, not a stuck message later.
 */
export type RetryDelay = (retried: number) => number;

const FUNCTIONS: Record<string, { arity: [number, number]; fn: (...args: number[]) => number }> = {
  pow: { arity: [2, 2], fn: (a = 0, b = 0) => a ** b },
  sqrt: { arity: [1, 1], fn: Math.sqrt },
  abs: { arity: [1, 1], fn: Math.abs },
  exp: { arity: [1, 1], fn: Math.exp },
  floor: { arity: [1, 1], fn: Math.floor },
  ceil: { arity: [1, 1], fn: Math.ceil },
  round: { arity: [1, 1], fn: Math.round },
  min: { arity: [1, Number.POSITIVE_INFINITY], fn: Math.min },
  max: { arity: [1, Number.POSITIVE_INFINITY], fn: Math.max },
};

type Binary = (a: number, b: number) => number;
// Binary operators, one map per precedence level, loosest first (a Map, so that no name from Object.prototype matches).
const BINARY_LEVELS: Map<string, Binary>[] = [
  new Map<string, Binary>([
    ['+', (a, b) => a + b],
    ['-', (a, b) => a - b],
  ]),
  new Map<string, Binary>([
    ['*', (a, b) => a * b],
    ['/', (a, b) => a / b],
  ]),
];

const MAX_DELAY_MS = 86_400_000;

export function compileRetryDelay(source: string): RetryDelay {
  const tokens = source.match(/\d+(?:\.\d+)?|[A-Za-z_]\w*|\S/g) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  const fail = (why: string): never => {
    throw new Error(`invalid Upstash-Retry-Delay "${source}": ${why}`);
  };
  const expect = (token: string) => {
    if (tokens[position] !== token) fail(`expected "${token}" at "${tokens[position] ?? 'end'}"`);
    position++;
  };

  type Node = RetryDelay;
  // Left-associative: a - b - c is (a - b) - c.
  const binary = (level: number): Node => {
    const operators = BINARY_LEVELS[level];
    if (!operators) return unary();
    let left = binary(level + 1);
    for (;;) {
      const op = operators.get(peek() ?? '');
      if (!op) return left;
      position++;
      const a = left;
      const b = binary(level + 1);
      left = (r) => op(a(r), b(r));
    }
  };
  const expression = () => binary(0);
  const unary = (): Node => {
    if (peek() === '-') {
      position++;
      const inner = unary();
      return (r) => -inner(r);
    }
    if (peek() === '+') position++;
    return primary();
  };
  const primary = (): Node => {
    const token = tokens[position++];
    if (token === undefined) return fail('unexpected end');
    if (/^\d/.test(token)) {
      const value = Number(token);
      return () => value;
    }
    if (token === 'retried') return (r) => r;
    if (token === '(') {
      const inner = expression();
      expect(')');
      return inner;
    }
    const fn = FUNCTIONS[token];
    if (!fn) return fail(`unknown name "${token}"`);
    expect('(');
    const args: Node[] = [expression()];
    while (peek() === ',') {
      position++;
      args.push(expression());
    }
    expect(')');
    if (args.length < fn.arity[0] || args.length > fn.arity[1]) fail(`${token} takes ${fn.arity[0]} argument(s)`);
    return (r) => fn.fn(...args.map((arg) => arg(r)));
  };

  if (tokens.length === 0) fail('empty');
  const compiled = expression();
  if (position < tokens.length) fail(`unexpected "${tokens[position]}"`);
  return (retried) => {
    const value = compiled(retried);
    return Number.isFinite(value) ? Math.min(MAX_DELAY_MS, Math.max(0, value)) : MAX_DELAY_MS;
  };
}
