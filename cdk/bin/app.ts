#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { buildZones } from '../zones';

// Everything the deployment varies by comes from CDK context: cdk.json and `-c key=value`.
buildZones(new App());
