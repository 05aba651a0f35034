import { describe, expect, it } from 'vitest';
import { DnsError } from '#core/urls/dns.ts';
import { FetchFailed, FetchRefused } from '../../workers/ingest/src/guarded-fetch.ts';
import { ParseError } from '../../workers/ingest/src/parsers/parse-error.ts';
import { failureDetail, JOB_MESSAGES, sortFailure, storableMessage } from '../../workers/ingest/src/pipeline/job-messages.ts';

const first = { retried: 0, final: false };
const last = { retried: 3, final: true };

/** What guardedFetch throws when the resolver fails, with the transport detail inside. */
const dnsFailure = (error: DnsError) =>
  new FetchFailed('dns_failed', `The host name could not be looked up: ${error.message}`, undefined, {
    cause: error,
    transient: error.transient,
  });
const resolverDown = dnsFailure(
  new DnsError('server_error', 'The DNS resolver could not be reached: TypeError: fetch failed (ECONNRESET 10.0.0.53:443)'),
);

describe('sortFailure', () => {
  it('ends the job at once with our own words for the document’s fault and our URL policy’s refusals', () => {
    expect(sortFailure(new ParseError('encrypted', 'The PDF is encrypted with a password'), first)).toEqual({
      retry: false,
      message: 'The PDF is encrypted with a password',
    });
    expect(sortFailure(new FetchRefused('url_not_allowed', 'The host name does not resolve'), first)).toEqual({
      retry: false,
      message: 'The host name does not resolve',
    });
  });

  it('retries a DNS outage, and on the last attempt says so plainly, without the transport detail', () => {
    expect(resolverDown.transient).toBe(true);
    expect(sortFailure(resolverDown, first)).toEqual({ retry: true });
    expect(sortFailure(resolverDown, { retried: 2, final: false })).toEqual({ retry: true });
    const final = sortFailure(resolverDown, last);
    expect(final).toEqual({ retry: false, message: 'The web address’s host name could not be looked up; try again later' });
    const timedOut = dnsFailure(new DnsError('timeout', 'The DNS resolver did not answer within 5 s'));
    expect(sortFailure(timedOut, first)).toEqual({ retry: true });
  });

  it('treats a broken CNAME chain as a definite answer: no retry', () => {
    const loop = dnsFailure(new DnsError('cname_chain', 'The CNAME chain for loop-a.example.test is longer than 8'));
    expect(loop.transient).toBe(false);
    expect(sortFailure(loop, first)).toEqual({
      retry: false,
      message: 'The web address’s host name could not be looked up: its DNS records are broken',
    });
  });

  it('words every other fetch failure by its reason, keeping only the status code', () => {
    const cases: [FetchFailed, string][] = [
      [new FetchFailed('timeout', 'The server did not respond within 15 s'), 'The web page did not respond in time'],
      [new FetchFailed('unreachable', 'The URL could not be reached (ECONNREFUSED)'), 'The web page could not be reached'],
      [new FetchFailed('http_status', 'The URL could not be reached (HTTP 404)', 404), 'The URL could not be reached (HTTP 404)'],
    ];
    for (const [error, message] of cases) expect(sortFailure(error, first)).toEqual({ retry: false, message });
  });

  it('retries anything unexpected, and ends the job with a fixed message only on the last attempt', () => {
    const pdfjs = Object.assign(new Error('Invalid PDF structure: bad XRef entry at 0x1F3A'), { name: 'InvalidPDFException' });
    expect(sortFailure(pdfjs, first)).toEqual({ retry: true });
    expect(sortFailure(pdfjs, last)).toEqual({ retry: false, message: JOB_MESSAGES.workerFailed });
    expect(sortFailure('a thrown string', last)).toEqual({ retry: false, message: JOB_MESSAGES.workerFailed });
  });

  it('never lets an upstream’s or a library’s text through', () => {
    const leaks = /ECONN|TypeError|XRef|0x|10\.0\.0|fetch failed|resolver|Exception/;
    for (const error of [resolverDown, new Error('TypeError: fetch failed'), new FetchFailed('unreachable', 'ECONNRESET')]) {
      const sorted = sortFailure(error, last);
      expect(sorted.retry).toBe(false);
      if (!sorted.retry) expect(sorted.message).not.toMatch(leaks);
    }
  });
});

describe('failureDetail', () => {
  it('keeps the detail, and its cause, for the log', () => {
    expect(failureDetail(resolverDown)).toMatch(/^FetchFailed: The host name could not be looked up: .*ECONNRESET.*\(cause: /);
  });
});

describe('storableMessage', () => {
  it('removes control characters, which a NUL among them would make Postgres refuse', () => {
    expect(storableMessage('Sheet "Q1\u0000\u0007" is missing\n')).toBe('Sheet "Q1 " is missing');
  });

  it('cuts a very long message', () => {
    const message = storableMessage(`Partly ingested: ${'page 7 could not be read; '.repeat(500)}`);
    expect(message.length).toBe(2000);
    expect(message.endsWith('…')).toBe(true);
  });
});
