#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { DeploymentConfigError } from '../config';
import { buildZones } from '../zones';

// Everything the deployment varies by comes from CDK context: cdk.json and `-c key=value`.
try {
  buildZones(new App());
} catch (error) {
  // A mistake in the context is the user's to fix: its message says what to give, and a stack
  // trace under it would only bury it. Anything else is a bug and keeps its trace.
  if (!(error instanceof DeploymentConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
