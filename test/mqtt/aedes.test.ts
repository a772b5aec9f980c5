import { aedesBroker } from '../helpers/brokers.js'
import { approvalContract } from './contract.js'

approvalContract('embedded aedes', aedesBroker)
