/**
 * One of the SDK's string enums (`Type`, `Behavior`, `Modality`) by its value: `sdkEnum<Type>('OBJECT')`.
 * The SDK's enums are objects in its main module, so importing one as a value loads the whole SDK
 * when this adapter is imported; the type parameter keeps the value checked against the enum
 * (`'OBJCT'` does not compile), and the SDK loads only when a client is made (client.ts).
 */
export function sdkEnum<E extends string>(value: `${E}`): E {
  return value as E
}
