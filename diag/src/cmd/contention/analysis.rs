//! Where the load saturates: the knee of the per-device rate and what is busy there.

use super::*;

pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The first point whose per-device rate falls below [`KNEE`] of one device's alone,
/// and the resource saturated there.
pub(super) fn knee(points: &[Point]) -> Option<Knee> {
    let alone = mean(&points.first()?.per_device_bytes_per_second);
    let p = points
        .iter()
        .find(|p| mean(&p.per_device_bytes_per_second) < KNEE * alone)?;
    let bus = p
        .bus_utilisation
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .cloned();
    let (saturated, utilisation) = if p.cpu_utilisation >= SATURATED {
        ("host CPU".to_string(), p.cpu_utilisation)
    } else {
        match bus {
            Some((name, u)) if u >= SATURATED => (format!("bus of {name}"), u),
            _ => ("none".to_string(), p.cpu_utilisation),
        }
    };
    Some(Knee {
        devices: p.devices,
        saturated,
        utilisation,
        per_device_share: mean(&p.per_device_bytes_per_second) / alone,
    })
}

/// What the knee's line says: where it is and what saturates there.
pub(super) fn knee_says(k: &Knee) -> String {
    if k.saturated == "none" {
        format!("knee: {} devices, no resource saturated", k.devices)
    } else {
        format!(
            "knee: {} devices, the {} saturates ({:.0} %)",
            k.devices,
            k.saturated,
            k.utilisation * 100.0
        )
    }
}
