import { randomInt } from 'node:crypto';

// QStash's ids are a prefix and a base58 tail (msg_2XavMmRc…, sig_7kYjw48m…); ours look alike.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function tail(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export const newMessageId = () => `msg_${tail(27)}`;
export const newSigningKey = () => `sig_${tail(28)}`;
export const newJwtId = () => `jwt_${tail(28)}`;
