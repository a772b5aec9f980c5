import { mosquittoBroker } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { approvalContract } from './contract.js'

approvalContract('Mosquitto', mosquittoBroker, missingCommands('mosquitto', 'mosquitto_passwd'))
