# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SSD anchor matching: which ground-truth box each anchor is matched to.

IoUs are computed in float32, in the same order of operations as the numpy
reference implementation in ``ndd/_ops/boxes.py`` (``box_iou``), box by box,
without storing the IoU matrix and without the GIL.
"""

import numpy as np

from libc.stdint cimport int64_t


cdef extern from *:
    """
    #include "cpu_features.h"

    /* fminf/fmaxf's results (the other value when one is NaN) as selects. */
    #define NDD_MIN(a, b) ((((a) < (b)) | ((b) != (b))) ? (a) : (b))
    #define NDD_MAX(a, b) ((((a) > (b)) | ((b) != (b))) ? (a) : (b))

    /* The vector loops below keep, per lane, the box's greatest IoU (NaNs never win)
       and its last anchor; this folds the lanes into the last anchor of the greatest,
       then goes on one anchor at a time from anchor j to the end. */
    static int ndd_match_rest(float bl, float bt, float br, float bb, int index, Py_ssize_t j,
                              Py_ssize_t nanchor, const float *a_left, const float *a_top,
                              const float *a_right, const float *a_bottom, const float *anchor_area,
                              float *best_iou, int *best_box, int lanes, const float *lane_best,
                              const int *lane_anchor)
    {
        const float area = (br - bl) * (bb - bt);
        float box_best = -1.0f;
        int box_anchor = -1;
        for (int lane = 0; lane < lanes; lane++) {
            float value = lane_best[lane];
            if (value > box_best || (value == box_best && lane_anchor[lane] > box_anchor)) {
                box_best = value;
                box_anchor = lane_anchor[lane];
            }
        }
        for (; j < nanchor; j++) {
            float width = NDD_MIN(br, a_right[j]) - NDD_MAX(bl, a_left[j]);
            float height = NDD_MIN(bb, a_bottom[j]) - NDD_MAX(bt, a_top[j]);
            float inter = NDD_MAX(width, 0.0f) * NDD_MAX(height, 0.0f);
            float uni = area + anchor_area[j] - inter;
            float iou = uni > 0 ? inter / uni : 0.0f;
            if (iou >= best_iou[j]) {
                best_iou[j] = iou;
                best_box[j] = index;
            }
            if (iou >= box_best) {
                box_best = iou;
                box_anchor = (int)j;
            }
        }
        return box_anchor;
    }

    #if NDD_X86_SIMD
    #include <immintrin.h>

    static inline __m128 ndd_select4(__m128 mask, __m128 a, __m128 b)
    {
        return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
    }

    static inline __m128i ndd_select4i(__m128 mask, __m128i a, __m128i b)
    {
        __m128i m = _mm_castps_si128(mask);
        return _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b));
    }

    static inline __m128 ndd_min4(__m128 a, __m128 b)
    {
        return ndd_select4(_mm_or_ps(_mm_cmplt_ps(a, b), _mm_cmpunord_ps(b, b)), a, b);
    }

    static inline __m128 ndd_max4(__m128 a, __m128 b)
    {
        return ndd_select4(_mm_or_ps(_mm_cmpgt_ps(a, b), _mm_cmpunord_ps(b, b)), a, b);
    }

    /* One box's IoU with every anchor: anchors it overlaps at least as much as their
       best so far take it, and the result is the last anchor of the box's greatest
       IoU (-1 when every IoU is NaN). Four anchors at a time with SSE2 (the compiler
       does not vectorise the selects after the division), the same float32
       operations as ndd_match_rest. */
    static int ndd_match_box_sse2(float bl, float bt, float br, float bb, int index, Py_ssize_t nanchor,
                                  const float *a_left, const float *a_top, const float *a_right,
                                  const float *a_bottom, const float *anchor_area, float *best_iou,
                                  int *best_box)
    {
        const __m128 l4 = _mm_set1_ps(bl), t4 = _mm_set1_ps(bt);
        const __m128 r4 = _mm_set1_ps(br), b4 = _mm_set1_ps(bb);
        const __m128 area4 = _mm_set1_ps((br - bl) * (bb - bt)), zero = _mm_setzero_ps();
        const __m128i index4 = _mm_set1_epi32(index), step4 = _mm_set1_epi32(4);
        __m128 box_best4 = _mm_set1_ps(-1.0f);
        __m128i box_anchor4 = _mm_set1_epi32(-1), anchors4 = _mm_setr_epi32(0, 1, 2, 3);
        float lane_best[4];
        int lane_anchor[4];
        Py_ssize_t j = 0;
        for (; j + 4 <= nanchor; j += 4) {
            __m128 width = _mm_sub_ps(ndd_min4(r4, _mm_loadu_ps(a_right + j)),
                                      ndd_max4(l4, _mm_loadu_ps(a_left + j)));
            __m128 height = _mm_sub_ps(ndd_min4(b4, _mm_loadu_ps(a_bottom + j)),
                                       ndd_max4(t4, _mm_loadu_ps(a_top + j)));
            __m128 inter = _mm_mul_ps(ndd_max4(width, zero), ndd_max4(height, zero));
            __m128 uni = _mm_sub_ps(_mm_add_ps(area4, _mm_loadu_ps(anchor_area + j)), inter);
            __m128 iou = _mm_and_ps(_mm_cmpgt_ps(uni, zero), _mm_div_ps(inter, uni));
            __m128 best = _mm_loadu_ps(best_iou + j);
            __m128 better = _mm_cmpge_ps(iou, best);
            __m128 box_better = _mm_cmpge_ps(iou, box_best4);
            _mm_storeu_ps(best_iou + j, ndd_select4(better, iou, best));
            _mm_storeu_si128((__m128i *)(best_box + j),
                             ndd_select4i(better, index4, _mm_loadu_si128((const __m128i *)(best_box + j))));
            box_best4 = ndd_select4(box_better, iou, box_best4);
            box_anchor4 = ndd_select4i(box_better, anchors4, box_anchor4);
            anchors4 = _mm_add_epi32(anchors4, step4);
        }
        _mm_storeu_ps(lane_best, box_best4);
        _mm_storeu_si128((__m128i *)lane_anchor, box_anchor4);
        return ndd_match_rest(bl, bt, br, bb, index, j, nanchor, a_left, a_top, a_right, a_bottom,
                              anchor_area, best_iou, best_box, 4, lane_best, lane_anchor);
    }

    __attribute__((target("avx2"))) static inline __m256 ndd_min8(__m256 a, __m256 b)
    {
        __m256 mask = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
        return _mm256_blendv_ps(b, a, mask);
    }

    __attribute__((target("avx2"))) static inline __m256 ndd_max8(__m256 a, __m256 b)
    {
        __m256 mask = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
        return _mm256_blendv_ps(b, a, mask);
    }

    /* ndd_match_box_sse2 eight anchors at a time. */
    __attribute__((target("avx2"))) static int ndd_match_box_avx2(
        float bl, float bt, float br, float bb, int index, Py_ssize_t nanchor, const float *a_left,
        const float *a_top, const float *a_right, const float *a_bottom, const float *anchor_area,
        float *best_iou, int *best_box)
    {
        const __m256 l8 = _mm256_set1_ps(bl), t8 = _mm256_set1_ps(bt);
        const __m256 r8 = _mm256_set1_ps(br), b8 = _mm256_set1_ps(bb);
        const __m256 area8 = _mm256_set1_ps((br - bl) * (bb - bt)), zero = _mm256_setzero_ps();
        const __m256i index8 = _mm256_set1_epi32(index), step8 = _mm256_set1_epi32(8);
        __m256 box_best8 = _mm256_set1_ps(-1.0f);
        __m256i box_anchor8 = _mm256_set1_epi32(-1), anchors8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        float lane_best[8];
        int lane_anchor[8];
        Py_ssize_t j = 0;
        for (; j + 8 <= nanchor; j += 8) {
            __m256 width = _mm256_sub_ps(ndd_min8(r8, _mm256_loadu_ps(a_right + j)),
                                         ndd_max8(l8, _mm256_loadu_ps(a_left + j)));
            __m256 height = _mm256_sub_ps(ndd_min8(b8, _mm256_loadu_ps(a_bottom + j)),
                                          ndd_max8(t8, _mm256_loadu_ps(a_top + j)));
            __m256 inter = _mm256_mul_ps(ndd_max8(width, zero), ndd_max8(height, zero));
            __m256 uni = _mm256_sub_ps(_mm256_add_ps(area8, _mm256_loadu_ps(anchor_area + j)), inter);
            __m256 iou = _mm256_and_ps(_mm256_cmp_ps(uni, zero, _CMP_GT_OQ), _mm256_div_ps(inter, uni));
            __m256 best = _mm256_loadu_ps(best_iou + j);
            __m256 better = _mm256_cmp_ps(iou, best, _CMP_GE_OQ);
            __m256 box_better = _mm256_cmp_ps(iou, box_best8, _CMP_GE_OQ);
            __m256i boxes = _mm256_loadu_si256((const __m256i *)(best_box + j));
            _mm256_storeu_ps(best_iou + j, _mm256_blendv_ps(best, iou, better));
            _mm256_storeu_si256((__m256i *)(best_box + j),
                                _mm256_blendv_epi8(boxes, index8, _mm256_castps_si256(better)));
            box_best8 = _mm256_blendv_ps(box_best8, iou, box_better);
            box_anchor8 = _mm256_blendv_epi8(box_anchor8, anchors8, _mm256_castps_si256(box_better));
            anchors8 = _mm256_add_epi32(anchors8, step8);
        }
        _mm256_storeu_ps(lane_best, box_best8);
        _mm256_storeu_si256((__m256i *)lane_anchor, box_anchor8);
        return ndd_match_rest(bl, bt, br, bb, index, j, nanchor, a_left, a_top, a_right, a_bottom,
                              anchor_area, best_iou, best_box, 8, lane_best, lane_anchor);
    }

    static int ndd_match_box(float bl, float bt, float br, float bb, int index, Py_ssize_t nanchor,
                             const float *a_left, const float *a_top, const float *a_right,
                             const float *a_bottom, const float *anchor_area, float *best_iou, int *best_box)
    {
        if (ndd_has_avx2())
            return ndd_match_box_avx2(bl, bt, br, bb, index, nanchor, a_left, a_top, a_right, a_bottom,
                                      anchor_area, best_iou, best_box);
        return ndd_match_box_sse2(bl, bt, br, bb, index, nanchor, a_left, a_top, a_right, a_bottom,
                                  anchor_area, best_iou, best_box);
    }

    #else

    /* One anchor at a time: ndd_match_rest from the first anchor, with no lanes. */
    static int ndd_match_box(float bl, float bt, float br, float bb, int index, Py_ssize_t nanchor,
                             const float *a_left, const float *a_top, const float *a_right,
                             const float *a_bottom, const float *anchor_area, float *best_iou, int *best_box)
    {
        return ndd_match_rest(bl, bt, br, bb, index, 0, nanchor, a_left, a_top, a_right, a_bottom,
                              anchor_area, best_iou, best_box, 0, NULL, NULL);
    }

    #endif
    """
    int ndd_match_box(float bl, float bt, float br, float bb, int index, Py_ssize_t nanchor,
                      const float* a_left, const float* a_top, const float* a_right,
                      const float* a_bottom, const float* anchor_area, float* best_iou,
                      int* best_box) noexcept nogil


def match_anchors(boxes, anchors, float criteria):
    """For (N, 4) ltrb ``boxes`` and (A, 4) ltrb ``anchors`` (float32): the index of
    the box matched to each anchor, -1 for none (int64, length A).

    An anchor takes the box it overlaps most when that IoU exceeds ``criteria``;
    then every box claims the anchor it overlaps most, later boxes winning an
    anchor claimed twice. Of equal overlaps the last wins.
    """
    cdef const float[:, ::1] box = np.ascontiguousarray(boxes, np.float32)
    # The anchors' coordinates as separate contiguous columns: the inner loop
    # runs over anchors.
    columns = np.ascontiguousarray(np.asarray(anchors, np.float32).T)
    cdef const float[::1] a_left = columns[0]
    cdef const float[::1] a_top = columns[1]
    cdef const float[::1] a_right = columns[2]
    cdef const float[::1] a_bottom = columns[3]
    cdef Py_ssize_t nbox = box.shape[0]
    cdef Py_ssize_t nanchor = a_left.shape[0]
    matches_array = np.full(nanchor, -1, np.int64)
    cdef int64_t[::1] matches = matches_array
    if nbox == 0 or nanchor == 0:
        return matches_array
    cdef float[::1] best_iou = np.full(nanchor, -1.0, np.float32)
    cdef int[::1] best_box = np.zeros(nanchor, np.int32)
    cdef int64_t[::1] best_anchor = np.empty(nbox, np.int64)
    cdef float[::1] anchor_area = np.empty(nanchor, np.float32)
    cdef Py_ssize_t i, j
    cdef int anchor
    with nogil:
        for j in range(nanchor):
            anchor_area[j] = (a_right[j] - a_left[j]) * (a_bottom[j] - a_top[j])
        for i in range(nbox):
            anchor = ndd_match_box(box[i, 0], box[i, 1], box[i, 2], box[i, 3], <int>i, nanchor, &a_left[0],
                                   &a_top[0], &a_right[0], &a_bottom[0], &anchor_area[0], &best_iou[0],
                                   &best_box[0])
            # A box that overlaps no anchor measurably (NaN coordinates) claims the first.
            best_anchor[i] = anchor if anchor >= 0 else 0
        for j in range(nanchor):
            if best_iou[j] > criteria:
                matches[j] = best_box[j]
        for i in range(nbox):
            matches[best_anchor[i]] = i
    return matches_array
