/** The zone contract as code. This folder imports nothing else of the project. */
export * from './error-codes';
export * from './http-paths';
export * from './jsonrpc';
export * from './methods';
export * from './attachments';
export * from './context';
export * from './usage';
export * from './files';
export * from './asker';
export * from './steps';
export * from './questions';
