// A varying array takes one location per element, so the members after it move on
// (LightColor: 3 and 4, ViewVec: 5), as DXC counts; a matrix varying takes one location per
// column (WGSL passes each location as its own vector).
struct VSOutput
{
    float4 Pos : SV_POSITION;
    float3 Normal : NORMAL0;
    float4 Color : TEXCOORD0;
    float3 LightVec : TEXCOORD1;
    float3 LightColor[2] : TEXCOORD2;
    float3 ViewVec : TEXCOORD3;
    float3x3 TBN : TEXCOORD4;
    float LightIntensity : TEXCOORD5;
};

[shader("vertex")]
VSOutput VSMain(float3 pos : POSITION0, float3 normal : NORMAL0)
{
    VSOutput o;
    o.Pos = float4(pos, 1.0);
    o.Normal = normal;
    o.Color = float4(normal, 1.0);
    o.LightVec = -pos;
    o.LightColor[0] = normal;
    o.LightColor[1] = pos;
    o.ViewVec = pos * 2.0;
    o.TBN = float3x3(normal, pos, normal * pos);
    o.LightIntensity = 0.5;
    return o;
}

[shader("pixel")]
float4 PSMain(VSOutput input) : SV_TARGET
{
    float3 light = input.LightColor[0] + input.LightColor[1];
    float3 n = mul(input.TBN, input.Normal);
    return input.Color * float4(light * dot(n, input.LightVec) + input.ViewVec, 1.0)
        * input.LightIntensity;
}
