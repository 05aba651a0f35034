/** A request that never reaches Redis: answered `{"error": message}` with HTTP 400, as Upstash answers it. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

/**
 * Commands the front refuses. All REST requests share one connection, so nothing may change
 * that connection's state (transactions go through /multi-exec, as on Upstash, and pub/sub
 * and MONITOR are Upstash's streaming endpoints, which the devstack does not serve). And
 * several devstacks may share one Redis, so nothing may empty it.
 */
const REFUSED: Record<string, string> = {
  MULTI: 'send the transaction to /multi-exec',
  EXEC: 'send the transaction to /multi-exec',
  DISCARD: 'send the transaction to /multi-exec',
  WATCH: 'the REST connection is shared',
  UNWATCH: 'the REST connection is shared',
  SELECT: 'the REST connection is shared',
  SWAPDB: "the devstack's Redis may be shared with other devstacks",
  AUTH: 'the REST connection is shared',
  HELLO: 'the REST connection is shared',
  RESET: 'the REST connection is shared',
  QUIT: 'the REST connection is shared',
  CLIENT: 'the REST connection is shared',
  MONITOR: 'the devstack serves no streaming endpoints',
  SUBSCRIBE: 'the devstack serves no streaming endpoints',
  PSUBSCRIBE: 'the devstack serves no streaming endpoints',
  SSUBSCRIBE: 'the devstack serves no streaming endpoints',
  UNSUBSCRIBE: 'the devstack serves no streaming endpoints',
  PUNSUBSCRIBE: 'the devstack serves no streaming endpoints',
  SUNSUBSCRIBE: 'the devstack serves no streaming endpoints',
  FLUSHALL: "the devstack's Redis may be shared with other devstacks",
  FLUSHDB: "the devstack's Redis may be shared with other devstacks",
  SHUTDOWN: "the devstack's Redis may be shared with other devstacks",
};
const REFUSED_SUBCOMMANDS: Record<string, string> = {
  'SCRIPT FLUSH': "the devstack's Redis may be shared with other devstacks",
  'FUNCTION FLUSH': "the devstack's Redis may be shared with other devstacks",
};

/**
 * One command from a JSON body: a name and its arguments, strings or numbers (what
 * @upstash/redis sends; it serializes anything else to JSON text itself). Numbers and
 * booleans go to Redis as their text.
 */
export function parseCommand(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new CommandError('ERR a command is a non-empty JSON array: ["NAME", "arg", ...]');
  }
  const args = value.map((item) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number' || typeof item === 'boolean') return String(item);
    throw new CommandError(`ERR command arguments are strings or numbers, not ${JSON.stringify(item)}`);
  });
  if (args[0] === '') throw new CommandError('ERR the command name is empty');
  refuse(args);
  return args;
}

/** Many commands (`/pipeline`, `/multi-exec`): an array of command arrays. */
export function commandList(value: unknown): unknown[] {
  if (!Array.isArray(value) || !value.every(Array.isArray)) {
    throw new CommandError('ERR the body is a JSON array of commands: [["NAME", "arg", ...], ...]');
  }
  return value;
}

function refuse([command = '', first]: string[]) {
  const name = command.toUpperCase();
  const sub = first === undefined ? '' : `${name} ${first.toUpperCase()}`;
  const reason = REFUSED[name] ?? REFUSED_SUBCOMMANDS[sub];
  if (reason) {
    throw new CommandError(`ERR Command is not available: '${REFUSED[name] ? name : sub}' in the devstack: ${reason}`);
  }
}
