import { mosquittoBroker } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { conversationsContract } from './contract.js'

conversationsContract(
  'Mosquitto',
  mosquittoBroker,
  missingCommands('mosquitto', 'mosquitto_passwd'),
)
