// The shared experiment cases on the embedded runtime with the userspace Service proxy: the
// default data plane is kernel NAT where the machine allows it, so this keeps the other one
// under the same protocol cases.
import { localUserspaceTarget } from '../helpers/local-target.js';
import { defineExperimentSuite } from './shared-suite.js';

defineExperimentSuite(localUserspaceTarget, 'core');
