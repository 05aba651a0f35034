/** A reply as ioredis's callBuffer gives it on RESP2: bytes, an integer, nil, an array, or an error inside an array. */
export type Reply = Buffer | number | null | Error | Reply[];

/** What a command came to in a `/pipeline` or `/multi-exec` answer. */
export type Outcome = { result: Reply } | { error: string };

/**
 * A reply as Upstash writes it in JSON. Without `Upstash-Encoding: base64`, bytes that are
 * not UTF-8 turn into U+FFFD, as Upstash's docs warn. With it, every string is base64 at any
 * depth, so binary values survive, except a top-level "OK", which Upstash sends as is (the
 * client decodes a bare "OK" as "OK" and anything else as base64: "OK" is also valid base64,
 * for the byte "8"). Integers and nil are never encoded.
 */
export function replyJson(reply: Reply, base64: boolean): unknown {
  if (base64 && Buffer.isBuffer(reply) && reply.length === 2 && reply.toString('latin1') === 'OK') return 'OK';
  return render(reply, base64);
}

function render(reply: Reply, base64: boolean): unknown {
  if (reply === null || typeof reply === 'number') return reply;
  if (Array.isArray(reply)) return reply.map((item) => render(item, base64));
  // An error inside an array (a Lua table holding redis.error_reply) has no JSON shape of its own: its text.
  const bytes = reply instanceof Error ? Buffer.from(reply.message) : reply;
  return base64 ? bytes.toString('base64') : bytes.toString('utf8');
}

export function outcomeJson(outcome: Outcome, base64: boolean): unknown {
  return 'error' in outcome ? outcome : { result: replyJson(outcome.result, base64) };
}
