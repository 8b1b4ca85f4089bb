import * as path from 'node:path';

/** The repository root (cdk/..): entry points and package-lock.json are resolved from here. */
export const PROJECT_ROOT = path.resolve(__dirname, '..');
