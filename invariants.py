
def _iou_checks(c, i, outs, ins):
    kw = c["kwargs"]
    if "crop_shape" in kw or "input_shape" in kw: return None
    b = ins[0]
    if b.shape[0] == 0: return None
    nd = b.shape[1] // 2
    lay = kw.get("bbox_layout") or ("xyXY" if nd == 2 else "xyzXYZ")
    if kw.get("ltrb") is False and "bbox_layout" not in kw: lay = "xyWH" if nd == 2 else "xyzWHD"
    lo = b[:, :nd].astype(np.float64)
    hi = b[:, nd:].astype(np.float64) if lay[-1] in "YZ" else lo + b[:, nd:]
    anc, shp = outs[0].astype(np.float64), outs[1].astype(np.float64)
    if np.allclose(anc, 0) and np.allclose(shp, 1) and kw.get("allow_no_crop", True): return None
    inter = np.prod(np.clip(np.minimum(hi, anc + shp) - np.maximum(lo, anc), 0, None), axis=1)
    va = np.prod(np.clip(hi - lo, 0, None), axis=1)
    if kw.get("threshold_type", "iou") == "overlap": m = np.where(va > 0, inter / np.maximum(va, 1e-12), 0)
    else: m = inter / np.maximum(va + np.prod(shp) - inter, 1e-12)
    th = min(kw.get("thresholds", [0.0]))
    agg = m.min() if kw.get("all_boxes_above_threshold", True) else m.max()
    if agg < th - 1e-4: return f"metric {agg:.3f} < min threshold {th}"
    return None

_old = inv_random_bbox_crop
def inv_random_bbox_crop(c, i, outs, ins):
    return _old(c, i, outs, ins) or _iou_checks(c, i, outs, ins)
