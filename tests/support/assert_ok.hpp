// GoogleTest assertions on f2fscore::Result / Status that print the error
// (code, message, offset) when they fail:
//   ASSERT_OK(expr);                     EXPECT_OK(expr);
//   ASSERT_OK_AND_ASSIGN(auto v, expr);  // v = *expr, or fail printing expr's error
#pragma once

#include <utility>

#include <gtest/gtest.h>

namespace f2fstest {

template <class R>
::testing::AssertionResult is_ok(const R& r) {
  if (r) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.error().to_string();
}

}  // namespace f2fstest

#define ASSERT_OK(expr) ASSERT_TRUE(::f2fstest::is_ok(expr)) << #expr
#define EXPECT_OK(expr) EXPECT_TRUE(::f2fstest::is_ok(expr)) << #expr

#define F2FSTEST_CONCAT_INNER_(a, b) a##b
#define F2FSTEST_CONCAT_(a, b) F2FSTEST_CONCAT_INNER_(a, b)
#define F2FSTEST_ASSERT_OK_AND_ASSIGN_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  ASSERT_TRUE(::f2fstest::is_ok(tmp)) << #expr;        \
  lhs = std::move(*tmp)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  F2FSTEST_ASSERT_OK_AND_ASSIGN_(F2FSTEST_CONCAT_(f2fstest_result_, __LINE__), lhs, expr)
