import type { CheckResult } from './check-result.ts';

/**
 * QStash's regions (upstash.com/docs/qstash/howto/multi-region). Each is separate: its own URL, token,
 * signing keys, messages and bill. A token used at another region's URL is refused ("user not found in
 * this region"), so every upload would be 503. README.md → Deploy has the same table.
 */
export const QSTASH_REGIONS = [
  { region: 'eu-central-1', name: 'EU', urls: ['https://qstash-eu-central-1.upstash.io', 'https://qstash.upstash.io'] },
  { region: 'us-east-1', name: 'US', urls: ['https://qstash-us-east-1.upstash.io'] },
] as const;

const normalised = (url: string) => url.trim().replace(/\/+$/, '').toLowerCase();

/** The region a QSTASH_URL names, if it is one of QStash's. */
export function qstashRegionOf(url: string) {
  return QSTASH_REGIONS.find((region) => (region.urls as readonly string[]).includes(normalised(url)));
}

/**
 * QSTASH_URL must name a region outright: left blank, every worker falls back to the EU URL, which an
 * account in the US region cannot use. A URL that is no region's is refused, not warned about: it cannot
 * work, and nothing else fails until the first upload. If Upstash opens a region, add it above.
 */
export function checkQStashRegion(url: string | undefined): CheckResult {
  const known = QSTASH_REGIONS.map((region) => `${region.urls[0]} (${region.name})`).join(', ');
  if (!url?.trim()) {
    return {
      status: 'fail',
      subject: 'QSTASH_URL',
      message: `not set: the workers would use the EU region's URL, which a US account cannot use. Set the URL of your QStash region, shown with the token in the Upstash console: ${known}`,
    };
  }
  const region = qstashRegionOf(url);
  if (!region) {
    return {
      status: 'fail',
      subject: 'QSTASH_URL',
      message: `not a QStash region's URL; QStash answers at ${known}`,
    };
  }
  return {
    status: 'pass',
    subject: 'QSTASH_URL',
    message: `the ${region.name} region (${region.region}); QSTASH_TOKEN and both signing keys must come from the same region`,
  };
}

/**
 * Asks QStash itself: the token is accepted at QSTASH_URL (GET /v2/keys, the smallest authenticated
 * read), and the signing keys it answers with are the ones the workers verify deliveries with. QStash
 * signs with its current key; after a rotation the old next key is current, so the workers' pair still
 * verifies as long as QStash's current key is one of them.
 */
export async function checkQStashAccount(
  settings: { url: string; token: string; currentSigningKey?: string; nextSigningKey?: string },
  fetcher: typeof fetch = fetch,
): Promise<CheckResult> {
  const subject = 'QStash account';
  let response: Response;
  try {
    response = await fetcher(`${settings.url.replace(/\/+$/, '')}/v2/keys`, {
      headers: { Authorization: `Bearer ${settings.token}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    return {
      status: 'unchecked',
      subject,
      message: `QStash could not be reached from here (${(error as Error).message}); the token and signing keys were not checked`,
    };
  }
  if (response.status === 401 || response.status === 403 || response.status === 404) {
    return {
      status: 'fail',
      subject,
      message: `QStash refused QSTASH_TOKEN at QSTASH_URL (HTTP ${response.status}): the token is wrong or belongs to another region`,
    };
  }
  if (!response.ok) {
    return {
      status: 'unchecked',
      subject,
      message: `QStash answered HTTP ${response.status}; the token and signing keys were not checked`,
    };
  }
  const keys = (await response.json().catch(() => ({}))) as { current?: string; next?: string };
  const ours = [settings.currentSigningKey, settings.nextSigningKey].filter(Boolean);
  if (!keys.current || !ours.includes(keys.current)) {
    return {
      status: 'fail',
      subject,
      message:
        'the token is accepted, but QStash signs with a key that is neither QSTASH_CURRENT_SIGNING_KEY nor QSTASH_NEXT_SIGNING_KEY: the workers would refuse every delivery. Copy both keys from the same region in the Upstash console',
    };
  }
  if (!keys.next || !ours.includes(keys.next)) {
    return {
      status: 'warn',
      subject,
      message:
        "the token is accepted and deliveries verify, but QStash's next signing key is not among the workers': after the next key rotation they would refuse every delivery. Copy both keys again",
    };
  }
  return { status: 'pass', subject, message: 'QStash accepts the token at QSTASH_URL and signs with the keys the workers hold' };
}
