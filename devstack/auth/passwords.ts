import { compare, hash } from 'bcryptjs';

// GoTrue's bcrypt cost; hashes made here and by GoTrue are interchangeable.
const BCRYPT_COST = 10;

export const hashPassword = (password: string): Promise<string> => hash(password, BCRYPT_COST);

export const passwordMatches = (password: string, encrypted: string): Promise<boolean> => compare(password, encrypted);
