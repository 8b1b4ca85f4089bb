// Tests run offline and without AWS credentials: give the SDK placeholders and a region so no
// client ever looks for ~/.aws or the instance metadata service.
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'AKIDTESTTESTTEST';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test-secret-key';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
// Keep test output readable; tests that assert on logs raise the level themselves.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
