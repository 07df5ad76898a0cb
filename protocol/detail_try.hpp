// Internal to the protocol .cpp files (not part of the API): early-return
// helpers for DecodeResult chains, so decoders read as a list of fields.
#pragma once

// Evaluates `expr` (a DecodeResult<T>); on error returns it from the enclosing
// function, otherwise binds the value to `var`.
#define SP_TRY(var, expr)                                          \
  auto var##_result = (expr);                                      \
  if (!var##_result) return std::unexpected(var##_result.error()); \
  auto var = *var##_result

// Same for DecodeResult<void>.
#define SP_TRY_VOID(expr) \
  if (auto try_result_ = (expr); !try_result_) return std::unexpected(try_result_.error())
