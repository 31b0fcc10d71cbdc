// Internal: the vectorized e^t written once over a vector width (ExpLanes, for exp_avx512.h,
// lanes_avx2.h and lanes_neon.h) with its constants, and the constants of the AMX softmax's 2^f
// (attention_amx.cc).
// t = n ln2 + r with n = round(t log2 e) and r = t - n ln2 in two parts (Cody and Waite), so
// |r| <= ln2 / 2; e^r = 1 + r + r² p(r) with the degree-5 minimax polynomial p of the Cephes
// library's expf (relative error about 2e-7 over that range).
#pragma once

namespace vllm::kernels {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f;  // ln 2 rounded to few bits: n · kLn2High is exact
constexpr float kLn2Low = -2.12194440e-4f;
constexpr int kNumExpCoefficients = 6;  // p's, highest degree first
constexpr float kExpCoefficients[kNumExpCoefficients] = {1.9875691500e-4f, 1.3981999507e-3f,
                                                         8.3334519073e-3f, 4.1665795894e-2f,
                                                         1.6666665459e-1f, 5.0000001201e-1f};
// Where t is clamped: beyond, e^t is inf / 0 anyway (vscalefps gets there exactly).
constexpr float kExpClampHigh = 89.0f;
constexpr float kExpClampLow = -104.0f;
// The same where 2^n must stay a normal float (the AVX2 path builds it in the exponent bits).
constexpr float kExpClampHighNormal = 88.0f;
constexpr float kExpClampLowNormal = -87.0f;

// e^t per lane: t = n ln2 + r, e^r by the polynomial, times 2^n by Lanes::Scale2n. t is clamped
// first to [Lanes::kExpClampLow, Lanes::kExpClampHigh] so that n stays finite; NaN passes through.
// Lanes (exp_avx512.h's Avx512Lanes, lanes_avx2.h's Avx2Lanes, lanes_neon.h's NeonLanes) supplies
// Vec, Set1, Min, Max, Add, Mul, Fmadd (a b + c), Fnmadd (c − a b), Round (to nearest) and
// Scale2n.
template <typename Lanes>
inline typename Lanes::Vec ExpLanes(typename Lanes::Vec t) {
  using Vec = typename Lanes::Vec;
  t = Lanes::Min(Lanes::Set1(Lanes::kExpClampHigh),
                 Lanes::Max(Lanes::Set1(Lanes::kExpClampLow), t));
  const Vec n = Lanes::Round(Lanes::Mul(t, Lanes::Set1(kLog2e)));
  Vec r = Lanes::Fnmadd(n, Lanes::Set1(kLn2High), t);
  r = Lanes::Fnmadd(n, Lanes::Set1(kLn2Low), r);
  Vec p = Lanes::Set1(kExpCoefficients[0]);
#pragma GCC unroll 8
  for (int i = 1; i < kNumExpCoefficients; ++i) {
    p = Lanes::Fmadd(p, r, Lanes::Set1(kExpCoefficients[i]));
  }
  // e^r = 1 + r + r² p
  const Vec e_r = Lanes::Add(Lanes::Fmadd(Lanes::Mul(r, r), p, r), Lanes::Set1(1.0f));
  return Lanes::Scale2n(e_r, n);
}

// 2^f for f in [0, 1] as 1 + f q(f), q of degree 3 fitted to the relative error (Lawson's
// iteration on Chebyshev nodes): within 3.0e-6 relative, and exactly 1 at f = 0.
constexpr int kNumExp2Coefficients = 4;  // q's, highest degree first
constexpr float kExp2Coefficients[kNumExp2Coefficients] = {1.3426686637e-2f, 5.2242469043e-2f,
                                                           2.4128021300e-1f, 6.9304484129e-1f};

// GELU(tanh)'s constants: y = sqrt(2/π) · x · (1 + 0.044715 x²).
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// GELU(erf)'s constants: gelu(x) = x / 2 · (1 + erf(x / sqrt(2))), with erfc(z) for z >= 0 as
// t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^-z², t = 1 / (1 + p z) (Abramowitz and Stegun
// 7.1.26, absolute error below 1.5e-7), so that gelu(x) = x (1 - erfc / 2) for x >= 0 and
// x erfc / 2 for x < 0 (no cancellation on the negative side).
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kErfcP = 0.3275911f;
constexpr int kNumErfcCoefficients = 5;  // a5 first
constexpr float kErfcCoefficients[kNumErfcCoefficients] = {
    1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f};

}  // namespace vllm::kernels
