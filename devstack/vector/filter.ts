import { badRequest } from './errors.ts';
import type { Metadata } from './types.ts';

/**
 * Upstash Vector's metadata filter language: SQL-like comparisons on metadata paths
 * (`a.b`, `a[0]`, `a[#-1]`), combined with AND / OR and parentheses, AND binding tighter.
 * Keywords and boolean literals are case-insensitive; strings take single or double quotes.
 */
export type MetadataPredicate = (metadata: Metadata | undefined) => boolean;

type Literal = string | number | boolean;
type PathStep = { field: string } | { index: number; fromEnd: boolean };

type Token =
  | { kind: 'word'; text: string; at: number }
  | { kind: 'string'; value: string; at: number }
  | { kind: 'number'; value: number; at: number }
  | { kind: 'op'; text: '=' | '!=' | '<' | '<=' | '>' | '>='; at: number }
  | { kind: '(' | ')' | ','; at: number }
  | { kind: 'end'; at: number };

const identifierStart = /[A-Za-z_]/;
const identifierPart = /[A-Za-z0-9_.[\]#-]/;
const numberPattern = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/;

export function parseFilter(source: string): MetadataPredicate {
  const parser = new Parser(tokenize(source));
  const predicate = parser.expression();
  parser.expectEnd();
  return predicate;
}

function filterError(message: string, at: number): Error {
  return badRequest(`Invalid filter: ${message} at position ${at}`);
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (char === '(' || char === ')' || char === ',') {
      tokens.push({ kind: char, at: i });
      i++;
    } else if (char === "'" || char === '"') {
      const start = i;
      let value = '';
      i++;
      while (i < source.length && source[i] !== char) {
        // A backslash escapes the quote, or another backslash, inside a literal.
        if (source[i] === '\\' && i + 1 < source.length) i++;
        value += source[i];
        i++;
      }
      if (i >= source.length) throw filterError('unterminated string literal', start);
      i++;
      tokens.push({ kind: 'string', value, at: start });
    } else if (char === '!' || char === '<' || char === '>' || char === '=') {
      const two = source.slice(i, i + 2);
      if (two === '!=' || two === '<=' || two === '>=') {
        tokens.push({ kind: 'op', text: two, at: i });
        i += 2;
      } else if (char === '!') {
        throw filterError("unexpected '!'", i);
      } else {
        tokens.push({ kind: 'op', text: char as '=' | '<' | '>', at: i });
        i++;
      }
    } else if (/[0-9+\-.]/.test(char)) {
      const match = numberPattern.exec(source.slice(i));
      if (!match) throw filterError(`unexpected '${char}'`, i);
      tokens.push({ kind: 'number', value: Number(match[0]), at: i });
      i += match[0].length;
    } else if (identifierStart.test(char)) {
      const start = i;
      while (i < source.length && identifierPart.test(source[i]!)) i++;
      tokens.push({ kind: 'word', text: source.slice(start, i), at: start });
    } else {
      throw filterError(`unexpected '${char}'`, i);
    }
  }
  tokens.push({ kind: 'end', at: source.length });
  return tokens;
}

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  expression(): MetadataPredicate {
    const terms = [this.conjunction()];
    while (this.acceptKeyword('OR')) terms.push(this.conjunction());
    return terms.length === 1 ? terms[0]! : (metadata) => terms.some((term) => term(metadata));
  }

  expectEnd(): void {
    const token = this.peek();
    if (token.kind !== 'end') throw filterError(`unexpected ${describe(token)}`, token.at);
  }

  private conjunction(): MetadataPredicate {
    const factors = [this.primary()];
    while (this.acceptKeyword('AND')) factors.push(this.primary());
    return factors.length === 1 ? factors[0]! : (metadata) => factors.every((factor) => factor(metadata));
  }

  private primary(): MetadataPredicate {
    const token = this.peek();
    if (token.kind === '(') {
      this.position++;
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    if (token.kind === 'word' && token.text.toUpperCase() === 'HAS' && this.isWord(1, 'NOT', 'FIELD')) {
      this.position++;
      const negated = this.acceptKeyword('NOT');
      this.expectKeyword('FIELD');
      const path = this.path();
      return negated ? (metadata) => resolve(metadata, path) === undefined : (metadata) => resolve(metadata, path) !== undefined;
    }
    const path = this.path();
    return this.comparison(path);
  }

  private comparison(path: PathStep[]): MetadataPredicate {
    const token = this.next();
    if (token.kind === 'op') {
      const literal = this.literal();
      const read = (metadata: Metadata | undefined) => resolve(metadata, path);
      switch (token.text) {
        case '=':
          return (metadata) => equals(read(metadata), literal);
        case '!=':
          return (metadata) => {
            const value = read(metadata);
            return isScalar(value) && !equals(value, literal);
          };
        default: {
          if (typeof literal !== 'number') throw filterError(`operator ${token.text} needs a number`, token.at);
          const compare = numberComparison(token.text);
          return (metadata) => {
            const value = read(metadata);
            return typeof value === 'number' && compare(value, literal);
          };
        }
      }
    }
    if (token.kind !== 'word') throw filterError(`expected an operator but found ${describe(token)}`, token.at);
    const keyword = token.text.toUpperCase();
    const negated = keyword === 'NOT';
    const operator = negated ? this.nextKeyword() : keyword;
    const read = (metadata: Metadata | undefined) => resolve(metadata, path);
    switch (operator) {
      case 'GLOB': {
        const pattern = this.literal();
        if (typeof pattern !== 'string') throw filterError('GLOB needs a string pattern', token.at);
        const regex = globToRegExp(pattern);
        return (metadata) => {
          const value = read(metadata);
          return typeof value === 'string' && regex.test(value) !== negated;
        };
      }
      case 'IN': {
        const literals = this.literalList();
        return (metadata) => {
          const value = read(metadata);
          return isScalar(value) && literals.some((literal) => equals(value, literal)) !== negated;
        };
      }
      case 'CONTAINS': {
        const literal = this.literal();
        return (metadata) => {
          const value = read(metadata);
          return Array.isArray(value) && value.some((element) => equals(element, literal)) !== negated;
        };
      }
      default:
        throw filterError(`unknown operator '${negated ? `NOT ${operator}` : token.text}'`, token.at);
    }
  }

  private path(): PathStep[] {
    const token = this.next();
    if (token.kind !== 'word') throw filterError(`expected a field name but found ${describe(token)}`, token.at);
    return parsePath(token.text, token.at);
  }

  private literal(): Literal {
    const token = this.next();
    if (token.kind === 'string' || token.kind === 'number') return token.value;
    if (token.kind === 'word') {
      const word = token.text.toLowerCase();
      if (word === 'true') return true;
      if (word === 'false') return false;
    }
    throw filterError(`expected a literal but found ${describe(token)}`, token.at);
  }

  private literalList(): Literal[] {
    this.expect('(');
    const literals = [this.literal()];
    while (this.peek().kind === ',') {
      this.position++;
      literals.push(this.literal());
    }
    this.expect(')');
    return literals;
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.position++;
    return token;
  }

  private isWord(offset: number, ...words: string[]): boolean {
    const token = this.peek(offset);
    return token.kind === 'word' && words.includes(token.text.toUpperCase());
  }

  private acceptKeyword(word: string): boolean {
    if (!this.isWord(0, word)) return false;
    this.position++;
    return true;
  }

  private expectKeyword(word: string): void {
    const token = this.peek();
    if (!this.acceptKeyword(word)) throw filterError(`expected ${word} but found ${describe(token)}`, token.at);
  }

  private nextKeyword(): string {
    const token = this.next();
    if (token.kind !== 'word') throw filterError(`expected an operator but found ${describe(token)}`, token.at);
    return token.text.toUpperCase();
  }

  private expect(kind: '(' | ')'): void {
    const token = this.next();
    if (token.kind !== kind) throw filterError(`expected '${kind}' but found ${describe(token)}`, token.at);
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'word':
    case 'op':
      return `'${token.text}'`;
    case 'string':
      return `string '${token.value}'`;
    case 'number':
      return `number ${token.value}`;
    case 'end':
      return 'end of filter';
    default:
      return `'${token.kind}'`;
  }
}

function parsePath(text: string, at: number): PathStep[] {
  const steps: PathStep[] = [];
  const pattern = /([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[#(?:-(\d+))?\]|(\.)/y;
  let expectField = true;
  let i = 0;
  while (i < text.length) {
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    if (!match) throw filterError(`invalid field path '${text}'`, at);
    const [whole, field, index, fromEnd, dot] = match;
    if (field !== undefined) {
      if (!expectField) throw filterError(`invalid field path '${text}'`, at);
      steps.push({ field });
      expectField = false;
    } else if (dot !== undefined) {
      if (expectField) throw filterError(`invalid field path '${text}'`, at);
      expectField = true;
    } else {
      if (expectField) throw filterError(`invalid field path '${text}'`, at);
      steps.push(index !== undefined ? { index: Number(index), fromEnd: false } : { index: Number(fromEnd ?? 0), fromEnd: true });
    }
    i += whole.length;
  }
  if (expectField) throw filterError(`invalid field path '${text}'`, at);
  return steps;
}

function resolve(metadata: Metadata | undefined, path: PathStep[]): unknown {
  let value: unknown = metadata;
  for (const step of path) {
    if ('field' in step) {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, step.field))
        return undefined;
      value = (value as Record<string, unknown>)[step.field];
    } else {
      if (!Array.isArray(value)) return undefined;
      const index = step.fromEnd ? value.length - step.index : step.index;
      if (index < 0 || index >= value.length) return undefined;
      value = value[index];
    }
  }
  return value;
}

function isScalar(value: unknown): value is Literal {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function equals(value: unknown, literal: Literal): boolean {
  // The docs spell boolean literals as 1 and 0 too.
  if (typeof value === 'boolean' && typeof literal === 'number') return (literal === 1 && value) || (literal === 0 && !value);
  return isScalar(value) && value === literal;
}

function numberComparison(op: '<' | '<=' | '>' | '>='): (a: number, b: number) => boolean {
  switch (op) {
    case '<':
      return (a, b) => a < b;
    case '<=':
      return (a, b) => a <= b;
    case '>':
      return (a, b) => a > b;
    case '>=':
      return (a, b) => a >= b;
  }
}

/** UNIX glob, case-sensitive: `*`, `?`, `[abc]`, `[a-z]`, `[^abc]`. */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else if (char === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        source += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, close);
      const negated = body.startsWith('^') || body.startsWith('!');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
      i = close;
    } else source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}
