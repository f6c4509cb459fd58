// A console request the core (or a crawl source it routes to: a Scrapy crawl, a shared crawl) cannot
// carry out, as the contract's error: thrown where it is found, answered by the dispatcher.

import type { AppError } from '../../shared/contract';

export class AppRefusal extends Error {
  constructor(readonly error: AppError) {
    super(error.message);
  }
}

/** Throws the refusal of a request: its code, the words the user reads, and the field at fault. */
export const refuse = (code: AppError['code'], message: string, field?: string): never => {
  throw new AppRefusal({ code, message, ...(field ? { field } : {}) });
};
