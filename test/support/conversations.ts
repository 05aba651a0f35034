import { readFileSync } from 'node:fs';

/**
 * Multi-turn conversations over PubMedQA abstracts, for the conversation test and bench. Each
 * starts with the abstract's own PubMedQA question; the follow-ups name nothing of it: a pronoun
 * question, and (every other conversation) an elliptical "and what about X?" where X is one of the
 * abstract's MeSH terms that the first question does not use.
 */
export interface Abstract {
  id: string;
  question: string;
  text: string;
  meshes: string[];
}

export interface Conversation {
  abstractId: string;
  /** The first question, then the follow-ups. */
  turns: string[];
}

const PRONOUN_FOLLOW_UPS = [
  'What did they find?',
  'How was that studied?',
  'Who took part in it?',
  'What was its main conclusion?',
  'How many people were included?',
  'What were the results?',
];

// MeSH check tags and demographics say nothing about which abstract is meant.
const GENERIC_MESH = new Set([
  'Humans',
  'Male',
  'Female',
  'Adult',
  'Aged',
  'Aged, 80 and over',
  'Middle Aged',
  'Child',
  'Adolescent',
  'Young Adult',
  'Infant',
  'Child, Preschool',
  'Animals',
  'Retrospective Studies',
  'Prospective Studies',
]);

export function pubmedAbstracts(): Abstract[] {
  const raw = JSON.parse(readFileSync(new URL('../fixtures/pubmedqa/pqal_dev-first60.json', import.meta.url), 'utf8')) as Record<
    string,
    { QUESTION: string; CONTEXTS: string[]; MESHES: string[] }
  >;
  return Object.entries(raw).map(([id, item]) => ({
    id,
    question: item.QUESTION,
    text: item.CONTEXTS.join('\n\n'),
    meshes: item.MESHES,
  }));
}

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]+/g) ?? []);

export function conversationsOf(abstracts: readonly Abstract[]): Conversation[] {
  return abstracts.map((abstract, i) => {
    const asked = words(abstract.question);
    const turns = [abstract.question, PRONOUN_FOLLOW_UPS[i % PRONOUN_FOLLOW_UPS.length] as string];
    const topic = abstract.meshes.find((mesh) => !GENERIC_MESH.has(mesh) && ![...words(mesh)].some((word) => asked.has(word)));
    // MeSH writes some terms inverted ("Biomarkers, Tumor"); people say "tumor biomarkers".
    const spoken = topic?.split(', ').reverse().join(' ').toLowerCase();
    if (i % 2 === 0 && spoken) turns.push(`And what about ${spoken}?`);
    return { abstractId: abstract.id, turns };
  });
}
