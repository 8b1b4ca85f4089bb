import { ErrorCode, errorObject, type JsonRpcErrorObject } from '../contract';

/**
 * A failure the execution zone reports on the wire as a JSON-RPC error. Anything thrown that is
 * not an RpcError is unexpected: the dispatcher logs it and answers -32603 with a generic message.
 */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: number,
    message?: string,
    readonly data?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message ?? errorObject(code).message, options);
  }

  toErrorObject(): JsonRpcErrorObject {
    return errorObject(this.code, this.message, this.data);
  }

  static fromErrorObject(error: JsonRpcErrorObject): RpcError {
    return new RpcError(error.code, error.message, error.data);
  }

  static internal(cause?: unknown): RpcError {
    return new RpcError(ErrorCode.InternalError, undefined, undefined, { cause });
  }
}
