import { aedesBroker } from '../helpers/brokers.js'
import { conversationsContract } from './contract.js'

conversationsContract('embedded broker', aedesBroker)
