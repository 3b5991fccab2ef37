#pragma once

float3 ApplyLight(float3 n, float4 dir, float4 color)
{
    return color.rgb * saturate(dot(n, -dir.xyz));
}
