// The shared experiment cases on the embedded runtime: servers that break the contract.
import { localTarget } from '../helpers/local-target.js';
import { defineExperimentSuite } from './shared-suite.js';

defineExperimentSuite(localTarget, 'adversarial');
