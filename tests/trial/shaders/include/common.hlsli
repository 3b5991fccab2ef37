// Shared by the shaders that include it.
#pragma once

#ifndef SCALE
#error "SCALE must be defined (-D SCALE=...)"
#endif

struct Payload
{
    float4 Value;
};

float4 apply_scale(float4 v)
{
    return v * SCALE;
}
