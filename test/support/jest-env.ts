// Tests run offline and without AWS credentials: give the SDK placeholders and a region so no
// client ever looks for ~/.aws or the instance metadata service.
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'AKIDTESTTESTTEST';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test-secret-key';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
// Keep test output readable; tests that assert on logs raise the level themselves.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// The AWS SDK warns once per process that its releases after January 2027 need Node 22: with a
// worker per core and the CLI tests' child processes, that is dozens of copies of one notice. The
// global setup says it once (test/support/global-setup.ts); children inherit this variable.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
