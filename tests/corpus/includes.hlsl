// A pixel shader whose constant buffer and helper come from included files.
#include "inc/common.hlsli"

struct PSInput
{
    float4 Position : SV_Position;
    float3 Normal : NORMAL;
};

[shader("pixel")]
float4 ShadeLit(PSInput input) : SV_Target
{
    float3 n = normalize(input.Normal);
    return float4(ApplyLight(n, Sun.Direction, Sun.Color) + Ambient.rgb, 1.0);
}
