// The shared experiment cases on the real-cluster platform, through the Kubernetes API
// facade over the embedded runtime, with the client in this process (the Service's address).
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { defineExperimentSuite } from './shared-suite.js';

defineExperimentSuite(kubeFacadeTarget('local'), 'core');
